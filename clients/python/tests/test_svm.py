"""Real peers on Solana: the official PyPI x402 client with its SVM exact scheme (x402[svm]), wrapped in the
guard, pays the official npm seller on Solana devnet (@x402/express + @x402/svm) through the interop harness's
local facilitator, with the RPC stand-in for the mint and blockhash. A Solana option is judged as an EVM one:
the devnet USDC mint priced as USDC, the cap, payees compared exactly (Base58 is case-sensitive)."""

import asyncio
import hashlib
import json
import shutil
import subprocess
from pathlib import Path

import httpx
import pytest
from solders.keypair import Keypair
from x402 import x402Client
from x402.http import x402HTTPClient
from x402.http.clients import x402HttpxClient
from x402.mechanisms.svm.exact import register_exact_svm_client
from x402.mechanisms.svm.signers import KeypairSigner

from payguard import Guard, PaymentRefused

SOLANA_DEVNET = "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1"
RULES = {"screen_sanctions": False, "allowed_networks": [SOLANA_DEVNET]}


@pytest.fixture(scope="module")
def peers():
    node = shutil.which("node")
    if node is None:
        pytest.fail("node is required for the interop tests (the official npm seller and the facilitator)")
    proc = subprocess.Popen([node, str(Path(__file__).with_name("svm_peers.mjs"))], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    if not line:
        proc.kill()
        pytest.fail("svm_peers.mjs did not start (see its stderr above)")
    yield json.loads(line)
    proc.stdin.close()
    proc.wait(timeout=30)


def fac(peers, path, method="GET"):
    return httpx.request(method, peers["facilitator"] + path).json() if method == "GET" else httpx.post(peers["facilitator"] + path)


def svm_buyer(peers, **rules):
    # The interop buyer's key (interop/lib/solana.mjs derives the same seed), never funded: the facilitator is offline.
    seed = hashlib.sha256(b"payguard-interop-solana:buyer").digest()
    signer = KeypairSigner(Keypair.from_seed(seed))
    client = x402Client()
    client.set_spend_controls(False)
    register_exact_svm_client(client, signer, rpc_url=peers["rpc"])
    g = Guard(rules={**RULES, **rules})
    return g.attach(x402HTTPClient(client)), signer, g


def get(client, url):
    async def go():
        async with x402HttpxClient(client) as http:
            return await http.get(url)

    return asyncio.run(go())


def swap_case(s):
    return "".join(c.lower() if c.isupper() else c.upper() for c in s)


def test_solana_payment_allowed_and_settled(peers):
    fac(peers, "/_reset", "POST")
    client, signer, g = svm_buyer(peers)
    assert get(client, peers["seller"] + "/cheap").status_code == 200
    s = fac(peers, "/_stats")
    assert s["settle"]["success"] == 1
    assert (s["settled"][0]["payTo"], s["settled"][0]["amount"], s["settled"][0]["payer"]) == (peers["pay_to"], "10000", signer.address)
    assert g.spent()["spent_usd"] == "0.01"


def test_solana_over_the_cap_refused_before_signing(peers):
    fac(peers, "/_reset", "POST")
    client, _, g = svm_buyer(peers, max_per_payment_usd=1)
    with pytest.raises(PaymentRefused) as e:
        get(client, peers["seller"] + "/pricey")
    assert e.value.decision == "block"
    s = fac(peers, "/_stats")
    assert s["verify"]["calls"] + s["settle"]["calls"] == 0
    assert g.spent()["spent_usd"] == "0"


def test_solana_payee_lists_compare_exactly(peers):
    fac(peers, "/_reset", "POST")
    blocked, _, _ = svm_buyer(peers, payto_blocklist=[peers["pay_to"]])
    with pytest.raises(PaymentRefused) as e:
        get(blocked, peers["seller"] + "/cheap")
    assert e.value.decision == "block" and any("blocklist" in r for r in e.value.reasons)
    # The same letters in the other case are another key: they neither block nor allowlist the payee.
    other, _, _ = svm_buyer(peers, payto_blocklist=[swap_case(peers["pay_to"])])
    assert get(other, peers["seller"] + "/cheap").status_code == 200
    strict, _, _ = svm_buyer(peers, strict_allowlist=True, payto_allowlist=[swap_case(peers["pay_to"])])
    with pytest.raises(PaymentRefused) as e:
        get(strict, peers["seller"] + "/cheap")
    assert e.value.decision == "hold"
    assert fac(peers, "/_stats")["settle"]["success"] == 1
