"""Remote screening against a fake payguard serve (a local HTTP server): the free trial with a plain client,
only the selected offer sent, the stronger decision wins, local caps still apply, and a failed or unpayable
screening holds (never paying for it) unless on_error="allow" waives it explicitly."""

import asyncio
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from conftest import challenge, counting_client, pay_via

from payguard import PaymentRefused, guard

PAY_TO = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8"


class FakeService:
    def __init__(self, answer):
        self.asked = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 - http.server's name
                body = json.loads(self.rfile.read(int(self.headers["content-length"])))
                outer.asked.append({"path": self.path, "body": body})
                status, payload = answer
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def service(request):
    svc = FakeService(request.param)
    yield svc
    svc.close()


def run(coro):
    return asyncio.run(coro)


@pytest.mark.parametrize("service", [(200, {"decision": "block", "reasons": [f"block: payTo {PAY_TO} is an OFAC SDN-listed address"]})], indirect=True)
def test_trial_block_wins_and_only_the_selected_offer_is_sent(service):
    client, signer = counting_client()
    guard(client, remote=True, remote_url=service.url)
    ch = challenge(10000)
    ch.accepts.append(ch.accepts[0].model_copy(update={"amount": "20000"}))
    with pytest.raises(PaymentRefused, match="OFAC SDN-listed"):
        run(pay_via(client, ch))
    assert signer.signs == 0
    assert service.asked[0]["path"] == "/v1/preflight?trial=1"
    assert len(service.asked[0]["body"]["challenge"]["accepts"]) == 1
    assert service.asked[0]["body"]["rules"]["max_per_payment_usd"] == 1


@pytest.mark.parametrize("service", [(200, {"decision": "allow", "reasons": ["allow: all rules passed"]})], indirect=True)
def test_remote_allow_still_obeys_local_caps(service):
    client, signer = counting_client()
    guard(client, {"daily_cap_usd": 0.01}, remote=True, remote_url=service.url)
    run(pay_via(client, challenge(10000)))
    with pytest.raises(PaymentRefused, match="daily cap"):
        run(pay_via(client, challenge(10000)))
    assert signer.signs == 1


@pytest.mark.parametrize("service", [(402, {"x402Version": 2, "accepts": []}), (200, {"decision": "maybe", "reasons": []})], indirect=True)
def test_failed_screening_holds_never_pays_and_allow_waives(service):
    client, signer = counting_client()
    guard(client, remote=True, remote_url=service.url)
    with pytest.raises(PaymentRefused, match="hold: remote screening failed"):
        run(pay_via(client, challenge(10000)))
    down, down_signer = counting_client()
    guard(down, remote=True, remote_url="http://127.0.0.1:9")
    with pytest.raises(PaymentRefused, match="hold: remote screening failed"):
        run(pay_via(down, challenge(10000)))
    waived, waived_signer = counting_client()
    guard(waived, remote=True, remote_url=service.url, on_error="allow")
    run(pay_via(waived, challenge(10000)))
    assert (signer.signs, down_signer.signs, waived_signer.signs) == (0, 0, 1)
    assert all(a["path"] == "/v1/preflight?trial=1" for a in service.asked)  # the trial, never a paid call
