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


def test_receipt_options_as_users_pass_them():
    """now as a clock, an aware datetime or epoch seconds; max_age as a timedelta or seconds: the same case is
    judged the same whichever form is given; a wrong form raises TypeError saying what is wanted."""
    fresh = next(c for c in FILE["cases"] if c["name"] == "jws ten minutes old")
    old = next(c for c in FILE["cases"] if c["name"] == "custom max age exceeded")
    at = datetime.fromisoformat(fresh["now"].replace("Z", "+00:00"))
    for now in (lambda: at, at, at.timestamp(), int(at.timestamp())):
        assert verify_receipt(fresh["input"], FILE["jwks"], now=now).issued_at is not None
        for max_age in (60, 60.0, timedelta(seconds=60)):
            with pytest.raises(ReceiptError) as e:
                verify_receipt(old["input"], FILE["jwks"], now=now, max_age=max_age)
            assert e.value.kind == "expired"
    with pytest.raises(TypeError, match="timezone-aware"):
        verify_receipt(fresh["input"], FILE["jwks"], now=at.replace(tzinfo=None))
    with pytest.raises(TypeError, match="max_age must be"):
        verify_receipt(fresh["input"], FILE["jwks"], now=at, max_age="60")
