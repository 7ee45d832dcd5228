"""Imported by tests/test_readme.py before it runs the README's example as written: requests to
https://api.example/<path> go to the local seller at PAYGUARD_README_SELLER instead (the answer is rebuilt
without its request, so the SDK sees the URL the example asked for, as from the real host)."""

import os

import httpx

_seller = os.environ["PAYGUARD_README_SELLER"]
_send = httpx.AsyncHTTPTransport.handle_async_request


async def _routed(self: httpx.AsyncHTTPTransport, request: httpx.Request) -> httpx.Response:
    if request.url.host != "api.example":
        return await _send(self, request)
    target = _seller + request.url.raw_path.decode()
    res = await _send(self, httpx.Request(request.method, target, headers=request.headers, content=request.content))
    body = await res.aread()
    return httpx.Response(res.status_code, headers=res.headers, content=body)


httpx.AsyncHTTPTransport.handle_async_request = _routed  # type: ignore[method-assign]
