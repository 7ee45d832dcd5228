"""The guard attacked as issue 29 did, with the official PyPI x402 buyer (x402HttpxClient), real signatures and a
local seller that counts the payments that land: a seller's claimed resource.url, per-option holds, a raising
on_decision, the SDK's option choice, and the error a refusal raises."""

import asyncio
import base64
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from conftest import BASE_USDC, PAY_TO, counting_client
from x402.http.clients import x402HttpxClient

from payguard import Guard, PaymentRefused

LOCAL = {"screen_sanctions": False}
BASE_SEPOLIA_USDC = "0x036CbD53842c5426634e7929541eC2318f3dCF7e"


def option(atomic, network="eip155:8453", asset=BASE_USDC, pay_to=PAY_TO):
    return {"scheme": "exact", "network": network, "amount": str(atomic), "asset": asset, "payTo": pay_to,
            "maxTimeoutSeconds": 60, "extra": {"name": "USD Coin", "version": "2"}}


class Seller:
    """Answers unpaid requests with make(url) as a v2 PAYMENT-REQUIRED header; counts requests carrying a payment."""

    def __init__(self, make):
        self.paid = []
        seller = self

        class H(BaseHTTPRequestHandler):
            def do_GET(self):
                payment = self.headers.get("payment-signature") or self.headers.get("x-payment")
                if payment:
                    seller.paid.append(json.loads(base64.b64decode(payment)))
                    self.send_response(200)
                    self.end_headers()
                    self.wfile.write(b'{"ok":true}')
                    return
                ch = make(f"http://{self.headers['host']}{self.path}")
                self.send_response(402)
                self.send_header("PAYMENT-REQUIRED", base64.b64encode(json.dumps(ch).encode()).decode())
                self.send_header("content-type", "application/json")
                self.end_headers()
                self.wfile.write(b"{}")

            def log_message(self, *a):
                pass

        self.srv = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.url = f"http://127.0.0.1:{self.srv.server_address[1]}"
        threading.Thread(target=self.srv.serve_forever, daemon=True).start()

    def close(self):
        self.srv.shutdown()
        self.srv.server_close()


@pytest.fixture
def seller():
    made = []

    def start(make):
        s = Seller(make)
        made.append(s)
        return s

    yield start
    for s in made:
        s.close()


def v2(url, *options):
    return {"x402Version": 2, "resource": {"url": url, "description": "", "mimeType": "application/json"}, "accepts": list(options)}


def get(target, url):
    async def go():
        async with x402HttpxClient(target) as http:
            return await http.get(url)
    return asyncio.run(go())


def refused(target, url):
    with pytest.raises(PaymentRefused) as e:
        get(target, url)
    return e.value


def test_claimed_resource_url_never_judged(seller):
    s = seller(lambda url: v2("https://trusted.example/data", option(10000)))
    for rules in [{**LOCAL, "domain_blocklist": ["127.0.0.1"]},
                  {**LOCAL, "strict_allowlist": True, "domain_allowlist": ["trusted.example"], "payto_allowlist": [PAY_TO]}]:
        http, signer = counting_client()
        Guard(rules).attach(http)
        err = refused(http, s.url + "/data")
        assert any("domain 127.0.0.1" in r for r in err.reasons), err.reasons
        assert err.url == s.url + "/data" and signer.signs == 0
    assert s.paid == []


def test_bare_client_holds_on_the_unknown_domain(seller):
    s = seller(lambda url: v2("https://trusted.example/data", option(10000)))
    client, signer = counting_client(bare=True)
    Guard({**LOCAL, "domain_allowlist": ["trusted.example"]}).attach(client)
    with pytest.raises(Exception, match="hold: could not determine merchant domain"):
        get(client, s.url + "/data")
    assert signer.signs == 0 and s.paid == []


def test_per_option_hold_carries_its_amount(seller):
    s = seller(lambda url: v2(url, option(900_000)))
    seen = []
    http, signer = counting_client()
    g = Guard({**LOCAL, "daily_cap_usd": 1, "hold_above_usd": 1, "strict_allowlist": True,
               "domain_allowlist": ["127.0.0.1"], "payto_allowlist": ["0x1111111111111111111111111111111111111111"]},
              on_hold=lambda h: seen.append(h) or True)
    g.attach(http)
    assert get(http, s.url + "/a").status_code == 200
    assert seen[0]["amount_usd"] == "0.9" and "not on allowlist" in seen[0]["reasons"][0]
    assert g.spent()["spent_usd"] == "0.9"
    for path in ("/b", "/c"):
        err = refused(http, s.url + path)
        assert "daily cap $1 would be exceeded (spent $0.9)" in str(err)
    assert signer.signs == 1 and len(s.paid) == 1


def test_raising_on_decision_is_ignored_and_its_event_is_json(seller):
    s = seller(lambda url: v2(url, option(10000)))
    events = []

    def logger(e):
        events.append(json.dumps(e))
        raise RuntimeError("logger down")

    http, signer = counting_client()
    g = Guard({**LOCAL, "daily_cap_usd": 0.02}, on_decision=logger)
    g.attach(http)
    assert get(http, s.url + "/a").status_code == 200
    assert get(http, s.url + "/b").status_code == 200
    assert g.spent()["spent_usd"] == "0.02" and len(s.paid) == 2
    e = json.loads(events[0])
    assert e == {"decision": "allow", "reasons": ["allow: all rules passed"], "amount_usd": "0.01",
                 "amount_micros": 10000, "approved": True, "url": s.url + "/a"}


def test_sdk_steered_to_the_engines_option(seller):
    s = seller(lambda url: v2(url, option(10000, "eip155:84532", BASE_SEPOLIA_USDC), option(10000)))
    http, signer = counting_client()
    Guard(LOCAL).attach(http)
    assert get(http, s.url + "/data").status_code == 200
    assert s.paid[0]["accepted"]["network"] == "eip155:8453" and signer.signs == 1


def test_refusal_is_payment_refused_said_once(seller):
    s = seller(lambda url: v2(url, option(5_000_000)))
    http, signer = counting_client()
    Guard(LOCAL).attach(http)
    err = refused(http, s.url + "/pricey")
    assert (err.decision, err.reasons, str(err), err.receipt) == (
        "block", ["block: amount $5 exceeds max $1"], "payguard: block: amount $5 exceeds max $1", None)
    assert signer.signs == 0


def test_redirect_to_another_host_is_judged_on_the_host_that_answered(seller):
    s = seller(lambda url: v2("https://trusted.example/data", option(10000)))
    port = s.url.rsplit(":", 1)[1]

    class Front(BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(302)
            self.send_header("location", f"http://localhost:{port}{self.path}")
            self.end_headers()

        def log_message(self, *a):
            pass

    front = ThreadingHTTPServer(("127.0.0.1", 0), Front)
    threading.Thread(target=front.serve_forever, daemon=True).start()
    try:
        http, signer = counting_client()
        Guard({**LOCAL, "domain_blocklist": ["localhost"]}).attach(http)

        async def go():
            async with x402HttpxClient(http, follow_redirects=True) as c:
                return await c.get(f"http://127.0.0.1:{front.server_address[1]}/data")

        with pytest.raises(PaymentRefused) as e:
            asyncio.run(go())
        assert e.value.reasons == ["block: domain localhost is on blocklist"]
        assert e.value.url == f"http://localhost:{port}/data" and signer.signs == 0 and s.paid == []
    finally:
        front.shutdown()
        front.server_close()
