"""The Python half of the measurement behind docs/SPEC.md §12.6 (docs/benchmarks/clients.md): the Python
guard's native decision code on every decision vector. It first checks that every vector is decided as the Go
engine exported it, then reports the time per decision (all vectors, many rounds, after a warm-up) and the
cold start (a fresh interpreter: import payguard, then the first decision), the median of several processes.

    clients/python/.venv/bin/python scripts/bench-clients/bench.py      (scripts/test-python.sh --setup makes it)
"""

import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

T0 = time.perf_counter()
ROOT = Path(__file__).resolve().parents[2]
SANCTIONS = {"unavailable": {"state": "unavailable"}, "failed": {"state": "failed"}, "clear": {"state": "screened"},
             "listed": {"state": "screened", "address_match": True}}


def decider():
    from payguard.decide import decide_challenge
    from payguard.rules import normalize_rules
    from payguard.usd import parse_usd

    def decide(v):
        inp, s = v["input"], v["screening"]
        given = "domain_age_days" in s or "domain_has_a" in s or s.get("domain_failed")
        domain = {} if not given else {"failed": True} if s.get("domain_failed") else {
            "age_days": s.get("domain_age_days"), "has_a": s.get("domain_has_a")}
        spent = inp.get("context", {}).get("spent_today_usd")
        got = decide_challenge(inp["challenge"], inp["challenge"]["accepts"], normalize_rules(inp.get("rules")),
                               spent_today=parse_usd(spent) if spent is not None else 0,
                               screen=lambda pay_to, d: (SANCTIONS[s["sanctions"]], domain),
                               resource_url=inp.get("resource_url"))
        return [got.decision, got.reasons, got.chosen, got.amount_micros]
    return decide


def vectors():
    return json.loads((ROOT / "testdata" / "vectors" / "decisions.json").read_text())["vectors"]


if sys.argv[1:] == ["--cold"]:
    vs = vectors()
    decider()(vs[0])
    print(json.dumps({"cold_ms": (time.perf_counter() - T0) * 1000}))
    sys.exit(0)

vs = vectors()
decide = decider()
wrong = [v["name"] for v in vs if decide(v) != [v["expect"][k] for k in ("decision", "reasons", "chosen", "amount_micros")]]
if wrong:
    sys.exit(f"{len(wrong)} vectors decided differently: {wrong[:5]}")
for _ in range(5):
    for v in vs:
        decide(v)
rounds = 50
start = time.perf_counter()
for _ in range(rounds):
    for v in vs:
        decide(v)
per_us = (time.perf_counter() - start) * 1e6 / (rounds * len(vs))
colds = [json.loads(subprocess.check_output([sys.executable, __file__, "--cold"]))["cold_ms"] for _ in range(7)]
print(json.dumps({"python": {"vectors": len(vs), "agree": True, "per_decision_us": round(per_us, 1),
                             "cold_start_ms_median": round(statistics.median(colds), 1)}}, indent=1))
