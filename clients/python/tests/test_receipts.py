"""Every receipt case the Go verifier judged (testdata/vectors/receipts.json) is judged the same here."""

import json
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from payguard.receipt import ReceiptError, verify_receipt

FILE = json.loads((Path(__file__).parents[3] / "testdata" / "vectors" / "receipts.json").read_text())


@pytest.mark.parametrize("c", FILE["cases"], ids=[c["name"] for c in FILE["cases"]])
def test_receipt_case(c):
    now = datetime.fromisoformat(c["now"].replace("Z", "+00:00"))
    kind = ""
    try:
        verify_receipt(c["input"], c.get("jwks") or FILE["jwks"], archival=c.get("archival", False),
                       max_age=timedelta(seconds=c.get("max_age_seconds", 0)), now=lambda: now)
    except ReceiptError as e:
        kind = e.kind
    assert kind == c["error"]
