"""Remote screening with payguard serve's POST /v1/preflight: the service gathers what the process cannot (the
OFAC list, domain age and DNS) for the selected offer. Explicit only. With a plain httpx client it asks the free
trial and never pays: a 402 is a failed screening. Paid screening goes through remote_client, an httpx client
paying with a separate, fee-guarded x402 client (fee_guard), never the merchant guard itself."""

from __future__ import annotations

from typing import Any

import httpx

from .rules import Rules

_DECISIONS = {"allow", "hold", "block"}


async def remote_screen(url: str, client: httpx.AsyncClient | None, payment_required: dict[str, Any],
                        selected: dict[str, Any], rules: Rules, resource_url: str | None) -> dict[str, Any]:
    """Answer {"ok": True, "decision", "reasons", "result"} or {"ok": False, "error"}; never raises."""
    paid = client is not None
    body: dict[str, Any] = {"challenge": {**payment_required, "accepts": [selected]}, "rules": rules.to_json()}
    if resource_url:
        body["resource_url"] = resource_url
    params = {} if paid else {"trial": "1"}
    try:
        if client is not None:
            res = await client.post(url.rstrip("/") + "/v1/preflight", json=body, params=params, timeout=10)
        else:
            async with httpx.AsyncClient(timeout=10) as plain:
                res = await plain.post(url.rstrip("/") + "/v1/preflight", json=body, params=params)
        if res.status_code == 402:
            return {"ok": False, "error": "the screening service asked for payment (trial used up); not paying"}
        if res.status_code != 200:
            return {"ok": False, "error": f"the screening service answered {res.status_code}"}
        result = res.json()
        reasons = result.get("reasons") if isinstance(result, dict) else None
        if result.get("decision") not in _DECISIONS or not isinstance(reasons, list) or not all(isinstance(r, str) for r in reasons):
            return {"ok": False, "error": "the screening service answered no usable decision"}
        return {"ok": True, "decision": result["decision"], "reasons": reasons, "result": result}
    except Exception as e:  # noqa: BLE001 - any failure is a failed screening, decided by on_error
        return {"ok": False, "error": str(e) or type(e).__name__}
