"""Test helpers: a real x402 client (PyPI x402, the official EVM scheme) whose signer counts signatures."""

from datetime import datetime, timezone

import pytest
from eth_account import Account
from x402 import x402Client
from x402.http import x402HTTPClient
from x402.mechanisms.evm.exact import register_exact_evm_client
from x402.mechanisms.evm.signers import EthAccountSigner
from x402.mechanisms.evm.upto.client import UptoEvmScheme

BUYER_KEY = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80"  # Anvil #0
PAY_TO = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8"
BASE_USDC = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"


class CountingSigner(EthAccountSigner):
    def __init__(self, fail=False):
        super().__init__(Account.from_key(BUYER_KEY))
        self.signs, self.fail = 0, fail

    def sign_typed_data(self, *args, **kwargs):
        self.signs += 1
        if self.fail:
            raise RuntimeError("hardware wallet unplugged")
        return super().sign_typed_data(*args, **kwargs)


def counting_client(fail=False, bare=False):
    """An x402HTTPClient (what x402HttpxClient drives; its payment-required hook carries the request URL) over an
    x402Client with the official EVM scheme, or with bare=True the x402Client alone; and the counting signer."""
    signer = CountingSigner(fail)
    # The SDK's own spend controls are off, so that what refuses is the guard.
    client = x402Client()
    client.set_spend_controls(False)
    register_exact_evm_client(client, signer)
    client.register("eip155:*", UptoEvmScheme(signer))  # upto options: a Permit2 authorization of the maximum
    return (client if bare else x402HTTPClient(client)), signer


async def pay_via(http, ch, url=None):
    """What x402HttpxClient does with a 402 from url (default: the URL the challenge names): the HTTP client's
    payment-required hooks with the request URL, then the payment payload."""
    if url is None:
        url = ch.resource.url if getattr(ch, "resource", None) else ""
    if await http.handle_payment_required(ch, url):
        raise AssertionError("a payment-required hook answered headers")
    return await http.create_payment_payload(ch)


def challenge(atomic, pay_to=PAY_TO, url="https://api.shop.example/data"):
    from x402.schemas import PaymentRequired

    return PaymentRequired.model_validate({
        "x402Version": 2,
        "resource": {"url": url, "description": "", "mimeType": "application/json"},
        "accepts": [{"scheme": "exact", "network": "eip155:8453", "amount": str(atomic), "asset": BASE_USDC,
                     "payTo": pay_to, "maxTimeoutSeconds": 60, "extra": {"name": "USD Coin", "version": "2"}}],
    })


class Clock:
    def __init__(self, iso):
        self.t = datetime.fromisoformat(iso)

    def __call__(self):
        return self.t

    def set(self, iso):
        self.t = datetime.fromisoformat(iso)


@pytest.fixture
def utc():
    return timezone.utc
