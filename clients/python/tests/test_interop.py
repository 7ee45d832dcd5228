"""Real peers: the official PyPI x402 client (x402HttpxClient) wrapped in the guard pays the official npm seller
(@x402/express) through the interop harness's local facilitator; remote screening and receipts come from the
real `payguard serve` (started by peers.mjs with Node and Go)."""

import asyncio
import base64
import json
import shutil
import subprocess
from pathlib import Path

import httpx
import pytest
from conftest import counting_client
from x402.http.clients import x402HttpxClient

from payguard import Guard, PaymentRefused, verify_jws, verify_receipt

LOCAL = {"screen_sanctions": False}


@pytest.fixture(scope="module")
def peers():
    node = shutil.which("node")
    if node is None:
        pytest.fail("node is required for the interop tests (the official npm seller and the facilitator)")
    proc = subprocess.Popen([node, str(Path(__file__).with_name("peers.mjs"))], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    if not line:
        proc.kill()
        pytest.fail("peers.mjs did not start (see its stderr above)")
    yield json.loads(line)
    proc.stdin.close()
    proc.wait(timeout=30)


def fac(peers, path, method="GET"):
    return httpx.request(method, peers["facilitator"] + path).json() if method == "GET" else httpx.post(peers["facilitator"] + path)


def buyer(**options):
    client, signer = counting_client()
    g = Guard(**options)
    g.attach(client)
    return client, signer, g


def test_allowed_payment_settles(peers):
    fac(peers, "/_reset", "POST")
    client, signer, g = buyer(rules=LOCAL)

    async def go():
        async with x402HttpxClient(client) as http:
            return await http.get(peers["seller"] + "/cheap")

    assert asyncio.run(go()).status_code == 200
    assert fac(peers, "/_stats")["settle"]["success"] == 1
    assert signer.signs == 1 and g.spent()["spent_usd"] == "0.01"


def test_over_the_cap_refused_before_signing(peers):
    fac(peers, "/_reset", "POST")
    client, signer, _ = buyer(rules=LOCAL)

    async def go():
        async with x402HttpxClient(client) as http:
            return await http.get(peers["seller"] + "/pricey")

    with pytest.raises(Exception, match=r"block: amount \$5 exceeds max \$1"):
        asyncio.run(go())
    s = fac(peers, "/_stats")
    assert signer.signs == 0 and s["verify"]["calls"] + s["settle"]["calls"] == 0


def test_twenty_concurrent_settle_exactly_five(peers):
    fac(peers, "/_reset", "POST")
    client, signer, g = buyer(rules={**LOCAL, "daily_cap_usd": 0.05})

    async def go():
        async with x402HttpxClient(client, timeout=60) as http:
            return await asyncio.gather(*(http.get(peers["seller"] + "/cheap") for _ in range(20)), return_exceptions=True)

    results = asyncio.run(go())
    paid = [r for r in results if not isinstance(r, Exception) and r.status_code == 200]
    refused = [r for r in results if isinstance(r, Exception) and "daily cap $0.05 would be exceeded" in str(r)]
    assert len(paid) == 5 and len(refused) == 15
    assert fac(peers, "/_stats")["settle"]["success"] == 5
    assert signer.signs == 5 and g.spent()["spent_usd"] == "0.05"


def test_hold_refused_by_on_hold(peers):
    fac(peers, "/_reset", "POST")
    asked = []
    client, signer, _ = buyer(rules=LOCAL, on_hold=lambda h: asked.append(h) or False)

    async def go():
        async with x402HttpxClient(client) as http:
            return await http.get(peers["seller"] + "/mid")

    with pytest.raises(Exception, match=r"hold: amount \$0.5 above hold threshold \$0.25"):
        asyncio.run(go())
    assert len(asked) == 1 and signer.signs == 0
    assert fac(peers, "/_stats")["verify"]["calls"] == 0


def test_remote_screening_and_receipt_from_payguard_serve(peers):
    fac(peers, "/_reset", "POST")
    client, signer, _ = buyer(remote=True, remote_url=peers["serve"])

    async def go(url):
        async with x402HttpxClient(client) as http:
            return await http.get(url)

    # The free trial of the real service screens the seller's offer: allowed and settled.
    assert asyncio.run(go(peers["seller"] + "/cheap")).status_code == 200
    # A payee on the OFAC excerpt: blocked by the service, nothing signed.
    with pytest.raises(PaymentRefused, match="OFAC SDN-listed address") as refused:
        asyncio.run(go(peers["sanctioned"] + "/cheap"))
    assert signer.signs == 1 and fac(peers, "/_stats")["settle"]["success"] == 1

    # A receipt from payguard serve verifies offline; altered, it does not. The refusal carries its own.
    jwks = httpx.get(peers["serve"] + "/.well-known/payguard-keys.json").text
    assert refused.value.decision == "block" and refused.value.receipt is not None
    assert verify_jws(refused.value.receipt["jws"], jwks)[1].decision == "block"
    ch = httpx.get(peers["seller"] + "/cheap")
    challenge = json.loads(base64.b64decode(ch.headers["payment-required"]))
    res = httpx.post(peers["serve"] + "/v1/preflight", params={"trial": "1"},
                     json={"challenge": challenge, "rules": {"screen_sanctions": False}})
    assert res.status_code == 200, res.text
    claims = verify_receipt(res.text, jwks)
    assert claims.decision == res.json()["decision"]
    with pytest.raises(Exception, match="field_altered"):
        verify_receipt(res.text.replace('"options_evaluated":1', '"options_evaluated":2'), jwks)
