"""Every decision vector the Go engine exported (testdata/vectors/decisions.json) is decided the same here."""

import json
from pathlib import Path

import pytest

from payguard.decide import decide_challenge
from payguard.rules import normalize_rules
from payguard.usd import parse_usd

VECTORS = json.loads((Path(__file__).parents[3] / "testdata" / "vectors" / "decisions.json").read_text())["vectors"]
SANCTIONS = {
    "unavailable": {"state": "unavailable"},
    "failed": {"state": "failed"},
    "clear": {"state": "screened"},
    "listed": {"state": "screened", "address_match": True},
}


def test_at_least_100_vectors():
    assert len(VECTORS) >= 100


@pytest.mark.parametrize("v", VECTORS, ids=[v["name"] for v in VECTORS])
def test_vector(v):
    inp, s = v["input"], v["screening"]
    given = "domain_age_days" in s or "domain_has_a" in s or s.get("domain_failed")
    domain = {} if not given else {"failed": True} if s.get("domain_failed") else {"age_days": s.get("domain_age_days"), "has_a": s.get("domain_has_a")}
    spent = inp.get("context", {}).get("spent_today_usd")
    got = decide_challenge(
        inp["challenge"],
        inp["challenge"]["accepts"],
        normalize_rules(inp.get("rules")),
        spent_today=parse_usd(spent) if spent is not None else 0,
        screen=lambda pay_to, d: (SANCTIONS[s["sanctions"]], domain),
        resource_url=inp.get("resource_url"),
    )
    assert (got.decision, got.reasons, got.chosen, got.amount_micros) == (
        v["expect"]["decision"], v["expect"]["reasons"], v["expect"]["chosen"], v["expect"]["amount_micros"])
