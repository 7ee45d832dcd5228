"""The guard vectors (testdata/vectors/guard.json, exported by the Go engine's TestGuardVectors): each sequence is
one guard on the official x402 client (its selection, policy and hooks, real signatures) meeting challenges in
order, each from the URL the agent requested. The option signed, the decision, its reasons and amount, and the
budget after each step must be the engine's."""

import asyncio
import json
from pathlib import Path

import pytest
from conftest import counting_client
from x402.schemas import PaymentRequired, PaymentRequiredV1

from payguard import Guard, PaymentRefused
from payguard.usd import parse_usd

SEQUENCES = json.loads((Path(__file__).parents[3] / "testdata" / "vectors" / "guard.json").read_text())["sequences"]


def test_at_least_eight_sequences():
    assert len(SEQUENCES) >= 8


def signed_index(ch, payload):
    p = payload.model_dump(by_alias=True, mode="json")
    if ch["x402Version"] == 1:
        auth = p["payload"]["authorization"]
        return next((i for i, a in enumerate(ch["accepts"]) if a["network"] == p["network"]
                     and a["payTo"].lower() == auth["to"].lower() and a["maxAmountRequired"] == str(auth["value"])), -1)
    got = p["accepted"]
    return next((i for i, a in enumerate(ch["accepts"]) if a["network"] == got["network"]
                 and a["payTo"].lower() == got["payTo"].lower() and a["amount"] == got["amount"]), -1)


@pytest.mark.parametrize("seq", SEQUENCES, ids=[s["name"] for s in SEQUENCES])
def test_guard_vector(seq):
    state = {"approve": False, "last": None}
    g = Guard(seq["rules"], on_hold=lambda h: state["approve"], on_decision=lambda e: state.update(last=e))
    http, signer = counting_client()
    g.attach(http)

    async def go():
        for step in seq["steps"]:
            state["approve"], state["last"] = step["approve"], None
            ch = step["challenge"]
            model = (PaymentRequiredV1 if ch["x402Version"] == 1 else PaymentRequired).model_validate(ch)
            before = signer.signs
            payload = refused = None
            try:
                if await http.handle_payment_required(model, step["url"]):
                    raise AssertionError("a payment-required hook answered headers")
                payload = await http.create_payment_payload(model)
            except PaymentRefused as e:
                refused = e
            want, where = step["expect"], f"{seq['name']} / {step['name']}"
            last = state["last"] or {}
            assert (last.get("decision"), last.get("reasons"), last.get("amount_micros")) == (
                want["decision"], want["reasons"], want["amount_micros"]), where
            assert (payload is not None) == want["paid"], where
            assert signer.signs - before == (1 if want["paid"] else 0), where
            if want["paid"]:
                assert signed_index(ch, payload) == want["selected"], where
            else:
                assert refused is not None and refused.decision == want["decision"], where
            assert parse_usd(g.spent()["spent_usd"]) == want["spent_after_micros"], where

    asyncio.run(go())
