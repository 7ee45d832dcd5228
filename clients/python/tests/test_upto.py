"""Real peers for the upto scheme: the official PyPI x402 client with its upto EVM scheme, wrapped in the guard,
pays the official npm seller with upto routes (@x402/express + @x402/evm UptoEvmScheme) through the interop
harness's local facilitator. The guard judges the maximum the client would authorize, before it is signed."""

import asyncio
import json
import shutil
import subprocess
from pathlib import Path

import httpx
import pytest
from conftest import CountingSigner
from x402 import x402Client
from x402.http import x402HTTPClient
from x402.http.clients import x402HttpxClient
from x402.mechanisms.evm.upto.client import UptoEvmScheme

from payguard import Guard

LOCAL = {"screen_sanctions": False}


@pytest.fixture(scope="module")
def peers():
    node = shutil.which("node")
    if node is None:
        pytest.fail("node is required for the interop tests (the official npm seller and the facilitator)")
    proc = subprocess.Popen([node, str(Path(__file__).with_name("upto_peers.mjs"))], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    if not line:
        proc.kill()
        pytest.fail("upto_peers.mjs did not start (see its stderr above)")
    yield json.loads(line)
    proc.stdin.close()
    proc.wait(timeout=30)


def upto_buyer():
    signer = CountingSigner()
    client = x402Client()
    client.set_spend_controls(False)
    client.register("eip155:*", UptoEvmScheme(signer))
    g = Guard(rules=LOCAL)
    # The HTTP client x402HttpxClient drives: its payment-required hook carries the request URL to the guard.
    return g.attach(x402HTTPClient(client)), signer, g


def get(client, url):
    async def go():
        async with x402HttpxClient(client) as http:
            return await http.get(url)

    return asyncio.run(go())


def stats(peers):
    return httpx.get(peers["facilitator"] + "/_stats").json()


def test_upto_under_the_caps_is_paid(peers):
    httpx.post(peers["facilitator"] + "/_reset")
    client, signer, g = upto_buyer()
    assert get(client, peers["seller"] + "/metered?usage=70000").status_code == 200
    settled = stats(peers)["settled"]
    assert [(s["scheme"], s["maximum"], s["amount"]) for s in settled] == [("upto", "200000", "70000")]
    # In process the guard does not read the settlement: it keeps the authorized maximum (SPEC §12.3).
    assert signer.signs == 1 and g.spent()["spent_usd"] == "0.2"


def test_upto_maximum_over_the_cap_is_refused_before_signing(peers):
    httpx.post(peers["facilitator"] + "/_reset")
    client, signer, g = upto_buyer()
    with pytest.raises(Exception, match=r"block: upto maximum \$5 exceeds max \$1"):
        get(client, peers["seller"] + "/metered-pricey")
    s = stats(peers)
    assert signer.signs == 0 and s["verify"]["calls"] + s["settle"]["calls"] == 0
    assert g.spent()["spent_usd"] == "0"
