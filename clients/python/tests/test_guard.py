"""The guard in the official x402 client's hook: decided before signing, reserved before signing, serialized,
reset only when the UTC day advances. The signer counts signatures: a refusal must leave it at 0."""

import asyncio
import pytest
from conftest import Clock, challenge, counting_client, pay_via

from payguard import PaymentRefused, Guard, fee_guard, guard

LOCAL = {"screen_sanctions": False}  # no sanctions list in process: acknowledged explicitly


def run(coro):
    return asyncio.run(coro)


def test_allowed_payment_is_signed_and_reserved():
    client, signer = counting_client()
    g = Guard(LOCAL)
    g.attach(client)
    payload = run(pay_via(client, challenge(10000)))
    assert payload.accepted.amount == "10000"
    assert signer.signs == 1
    assert g.spent()["spent_usd"] == "0.01"


def test_over_the_cap_refused_before_signing():
    client, signer = counting_client()
    guard(client, LOCAL)
    with pytest.raises(PaymentRefused, match=r"block: amount \$5 exceeds max \$1"):
        run(pay_via(client, challenge(5_000_000)))
    assert signer.signs == 0


def test_defaults():
    g = Guard()
    assert (g.rules.max_per_payment_usd, g.rules.hold_above_usd, g.rules.daily_cap_usd) == (1_000_000, 250_000, 25_000_000)
    assert g.rules.allowed_networks == ["eip155:8453", "base"] and g.rules.usdc_only
    client, signer = counting_client()
    g.attach(client)
    with pytest.raises(PaymentRefused, match="hold: sanctions data unavailable"):
        run(pay_via(client, challenge(10000)))
    assert signer.signs == 0


@pytest.mark.parametrize("answer,pays", [(False, False), (None, False), ("yes", False), ("raise", False), (True, True), ("async", True)])
def test_on_hold(answer, pays):
    client, signer = counting_client()
    seen = []

    def on_hold(h):
        seen.append(h)
        if answer == "raise":
            raise RuntimeError("approver down")
        if answer == "async":
            async def yes():
                return True
            return yes()
        return answer

    g = Guard(LOCAL, on_hold=on_hold)
    g.attach(client)
    if pays:
        run(pay_via(client, challenge(500_000)))
    else:
        with pytest.raises(PaymentRefused, match=r"hold: amount \$0.5 above hold threshold \$0.25"):
            run(pay_via(client, challenge(500_000)))
    assert signer.signs == (1 if pays else 0)
    assert seen[0]["amount_usd"] == "0.5"
    assert g.spent()["spent_usd"] == ("0.5" if pays else "0")


def test_reservation_kept_when_signing_fails():
    client, signer = counting_client(fail=True)
    g = Guard({**LOCAL, "daily_cap_usd": 0.015})
    g.attach(client)
    with pytest.raises(Exception, match="unplugged"):
        run(pay_via(client, challenge(10000)))
    assert signer.signs == 1 and g.spent()["spent_usd"] == "0.01"
    with pytest.raises(PaymentRefused, match=r"daily cap \$0.015 would be exceeded \(spent \$0.01\)"):
        run(pay_via(client, challenge(10000)))


def test_twenty_concurrent_against_five_cents():
    client, signer = counting_client()
    g = Guard({**LOCAL, "daily_cap_usd": 0.05})
    g.attach(client)

    async def many():
        return await asyncio.gather(*(pay_via(client, challenge(10000)) for _ in range(20)), return_exceptions=True)

    results = run(many())
    assert sum(not isinstance(r, Exception) for r in results) == 5
    assert signer.signs == 5 and g.spent()["spent_usd"] == "0.05"


def test_concurrent_holds_see_each_other():
    # Holds are decided under the lock and reserve while a person decides: two approvals cannot overspend.
    client, signer = counting_client()

    async def slow_yes(_):
        await asyncio.sleep(0.01)
        return True

    g = Guard({**LOCAL, "daily_cap_usd": 0.6}, on_hold=slow_yes)
    g.attach(client)

    async def two():
        return await asyncio.gather(*(pay_via(client, challenge(500_000)) for _ in range(2)), return_exceptions=True)

    results = run(two())
    assert sum(not isinstance(r, Exception) for r in results) == 1
    assert signer.signs == 1


def test_utc_day_reset_with_injected_clock():
    now = Clock("2026-11-22T23:59:58+00:00")
    client, _ = counting_client()
    g = Guard({**LOCAL, "daily_cap_usd": 0.02}, now=now)
    g.attach(client)

    async def pay(atomic):
        return await pay_via(client, challenge(atomic))

    async def scenario():
        await pay(20000)
        with pytest.raises(PaymentRefused, match="daily cap"):
            await pay(10000)
        now.set("2026-11-23T00:00:00+00:00")
        await pay(20000)
        assert g.spent() == {"day": "2026-11-23", "spent_usd": "0.02", "daily_cap_usd": "0.02"}
        now.set("2026-11-22T12:00:00+00:00")  # the clock goes back: not a fresh day
        with pytest.raises(PaymentRefused, match="daily cap"):
            await pay(10000)
        now.set("2026-11-23T23:00:00+05:00")  # 18:00 UTC, same UTC day
        with pytest.raises(PaymentRefused, match="daily cap"):
            await pay(10000)

    run(scenario())


def test_one_guard_per_event_loop():
    client, _ = counting_client()
    g = Guard(LOCAL)
    g.attach(client)
    errors = []

    def other_loop():
        try:
            asyncio.run(g.decide(challenge(10000).model_dump(by_alias=True), challenge(10000).accepts[0].model_dump(by_alias=True)))
        except RuntimeError as e:
            errors.append(str(e))

    async def main():
        await pay_via(client, challenge(10000))  # binds the budget to this (live) loop
        await asyncio.to_thread(other_loop)

    run(main())
    assert errors and "one event loop" in errors[0]


def test_only_the_selected_offer_is_screened():
    client, signer = counting_client()
    guard(client, {**LOCAL, "payto_blocklist": ["0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC"]})
    ch = challenge(10000)
    ch.accepts.append(ch.accepts[0].model_copy(update={"pay_to": "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC"}))
    run(pay_via(client, ch))
    assert signer.signs == 1


def test_rules_checked():
    for bad, msg in [({"maxPerPaymentUsd": 1}, "unknown rule"), ({"daily_cap_usd": -1}, "daily_cap_usd"),
                     ({"usdc_only": "yes"}, "not a boolean"), ({"allowed_networks": ["base"] * 101}, "at most 100")]:
        with pytest.raises(ValueError, match=msg):
            Guard(bad)
    with pytest.raises(ValueError, match="remote_url"):
        Guard(remote=True)
    with pytest.raises(ValueError, match="on_error"):
        Guard(on_error="block")


def test_fee_guard_pays_exactly_the_service():
    svc = "0x90F79bf6EB2c4f870365E785982E1f101E93b906"
    client, signer = counting_client()
    fee_guard(client, pay_to=svc, network="eip155:8453", service_url="https://screen.example")
    run(pay_via(client, challenge(10000, pay_to=svc, url="https://screen.example/v1/check")))
    for ch, msg in [(challenge(10000, url="https://screen.example/v1/check"), "not on allowlist"),
                    (challenge(10000, pay_to=svc, url="https://evil.example/x"), "not on allowlist"),
                    (challenge(30000, pay_to=svc, url="https://screen.example/v1/check"), "exceeds max")]:
        with pytest.raises(PaymentRefused, match=msg):
            run(pay_via(client, ch))
    assert signer.signs == 1
