"""The README's example as written: mypy --strict passes on it, and it runs (the official SDK signing for real)
against local sellers, printing what the README says it prints."""

import base64
import json
import os
import re
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from conftest import BASE_USDC, BUYER_KEY, PAY_TO

HERE = Path(__file__).parents[1]
README = (HERE / "README.md").read_text()


def block(lang, after):
    i = README.index(after)
    m = re.search(r"```" + lang + r"\n(.*?)```", README[i:], re.S)
    assert m, f"no {lang} block after {after!r}"
    return m.group(1)


@pytest.fixture
def sellers():
    prices = {"/cheap": 10_000, "/pricey": 750_000, "/mid": 200_000}
    paid = []

    class H(BaseHTTPRequestHandler):
        def do_GET(self):
            payment = self.headers.get("payment-signature")
            if payment:
                paid.append(json.loads(base64.b64decode(payment)))
                self.send_response(200)
                self.end_headers()
                self.wfile.write(b'{"data":"ok"}')
                return
            ch = {"x402Version": 2, "resource": {"url": "https://api.example" + self.path},
                  "accepts": [{"scheme": "exact", "network": "eip155:8453", "amount": str(prices.get(self.path, 10_000)),
                               "asset": BASE_USDC, "payTo": PAY_TO, "maxTimeoutSeconds": 60,
                               "extra": {"name": "USD Coin", "version": "2"}}]}
            self.send_response(402)
            self.send_header("PAYMENT-REQUIRED", base64.b64encode(json.dumps(ch).encode()).decode())
            self.end_headers()
            self.wfile.write(b"{}")

        def log_message(self, *a):
            pass

    srv = ThreadingHTTPServer(("127.0.0.1", 0), H)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{srv.server_address[1]}", paid
    srv.shutdown()
    srv.server_close()


def test_readme_example_runs_as_written(tmp_path, sellers):
    url, paid = sellers
    example = tmp_path / "example.py"
    example.write_text(block("python", "## Use"))
    run = "import sys; sys.path.insert(0, sys.argv[1]); import readme_httpx, runpy; runpy.run_path(sys.argv[2], run_name='__main__')"
    r = subprocess.run([sys.executable, "-c", run, str(Path(__file__).parent), str(example)], capture_output=True, text=True,
                       env={**os.environ, "AGENT_PRIVATE_KEY": BUYER_KEY, "PAYGUARD_README_SELLER": url}, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout == block("text", "it prints:")
    assert len(paid) == 1 and paid[0]["accepted"]["amount"] == "10000"


def test_readme_example_passes_mypy_strict(tmp_path):
    example = tmp_path / "example.py"
    example.write_text(block("python", "## Use"))
    r = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--cache-dir", os.devnull, str(example)],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr


def test_readme_install_line_installs_what_the_example_imports():
    install = block("sh", "## Install")
    assert "clients/python[evm]" in install
    extras = re.search(r"^evm = \[(.*)\]$", (HERE / "pyproject.toml").read_text(), re.M)
    assert extras and "x402[evm" in extras.group(1)
    assert "from x402.mechanisms.evm" in block("python", "## Use")


def test_readme_quotes_the_sdks_own_refusal_above_one_dollar():
    import asyncio

    from conftest import CountingSigner, challenge
    from x402 import x402Client
    from x402.mechanisms.evm.exact import register_exact_evm_client

    client = x402Client()  # the SDK's default spend controls
    register_exact_evm_client(client, CountingSigner())
    with pytest.raises(Exception) as e:
        asyncio.run(client.create_payment_payload(challenge(5_000_000)))
    quoted = re.search(r"`NoMatchingRequirementsError: (All payment requirements .*?)\. \.\.\.`", re.sub(r"\n\s*", " ", README))
    assert quoted, "README quotes the SDK refusal"
    assert type(e.value).__name__ == "NoMatchingRequirementsError" and str(e.value).startswith(quoted.group(1)), str(e.value)
