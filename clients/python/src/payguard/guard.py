"""The guard: payguard's decision inside the agent's process, in the official x402 Python client's
before-payment-creation hook, so a payment the rules refuse is never signed (SPEC "Client guard libraries").
The hook sees the one offer the client selected; only that offer is screened."""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Awaitable, Callable
from urllib.parse import urlsplit

import httpx

from .budget import Budget, Reservation
from .decide import decide_challenge
from .policy import Outcome
from .remote import remote_screen
from .rules import normalize_rules
from .usd import format_usd

_RANK = {"allow": 0, "hold": 1, "block": 2}


@dataclass
class Decision:
    decision: str
    reasons: list[str]
    amount_micros: int
    approved: bool
    reservation: Reservation | None = field(default=None, repr=False)

    @property
    def amount_usd(self) -> str:
        return format_usd(self.amount_micros)


OnHold = Callable[[dict[str, Any]], "bool | Awaitable[bool]"]


class Guard:
    """A payment guard with its own rules and daily budget.

    rules: snake_case rules (max_per_payment_usd, hold_above_usd, daily_cap_usd, allowed_networks, usdc_only,
    strict_allowlist, new_domain_days, screen_sanctions, domain/payto allow and block lists, and the Index
    rules); defaults $1 per payment, hold above $0.25, $25 a day, Base USDC only.
    remote: screen with payguard serve (remote_url) -- explicit, off by default; remote_client: an httpx client
    that pays for screening (a separate, fee-guarded x402 client); without it the free trial, never paying.
    on_hold: asked on a hold (sync or async); True pays, anything else refuses.
    on_error: a failed remote screening holds ("hold", default) or, explicitly, is decided locally ("allow").
    now: the clock (timezone-aware datetimes; tests inject one).
    """

    def __init__(self, rules: dict[str, Any] | None = None, *, remote: bool = False, remote_url: str | None = None,
                 remote_client: httpx.AsyncClient | None = None, on_hold: OnHold | None = None,
                 on_error: str = "hold", now: Callable[[], datetime] | None = None,
                 on_decision: Callable[[Decision], None] | None = None):
        if not isinstance(remote, bool):
            raise TypeError("payguard: remote must be a boolean")
        if remote and not remote_url:
            raise ValueError("payguard: remote screening needs remote_url")
        if on_error not in ("hold", "allow"):
            raise ValueError('payguard: on_error must be "hold" or "allow"')
        self.rules = normalize_rules(rules)
        self.remote, self.remote_url, self.remote_client = remote, remote_url, remote_client
        self.on_hold, self.on_error, self.on_decision = on_hold, on_error, on_decision
        self.budget = Budget(now)

    async def decide(self, payment_required: dict[str, Any], selected: dict[str, Any],
                     resource_url: str | None = None) -> Decision:
        """Judge one selected offer (wire-form dicts), reserving its amount when approved. Serialized."""
        remote = None
        if self.remote:
            assert self.remote_url is not None
            remote = await remote_screen(self.remote_url, self.remote_client, payment_required, selected,
                                         self.rules, resource_url)
        waived = remote is not None and not remote["ok"] and self.on_error == "allow"
        screened = remote is not None and (remote["ok"] or waived)
        async with self.budget.lock():
            local = decide_challenge(
                payment_required, [selected], self.rules, self.budget.spent_today(),
                # Without remote facts sanctions data is unavailable: with screen_sanctions on, that holds.
                screen=(lambda pay_to, domain: ({"state": "nothing"}, {})) if screened else None,
                resource_url=resource_url,
            )
            d = _combine(local, remote) if remote is not None and not waived else local
            # A hold reserves too, so that concurrent decisions see it while a person decides.
            reservation = None if d.decision == "block" else self.budget.reserve(d.amount_micros)
        if d.decision == "hold":
            approved = False
            if self.on_hold is not None:
                try:
                    answer = self.on_hold({"decision": d.decision, "reasons": d.reasons,
                                           "amount_usd": format_usd(d.amount_micros), "requirements": selected,
                                           "payment_required": payment_required})
                    approved = (await answer if inspect.isawaitable(answer) else answer) is True
                except Exception:  # noqa: BLE001 - a failing approver refuses
                    approved = False
            if not approved and reservation is not None:
                async with self.budget.lock():
                    self.budget.release(reservation)
            return self._report(Decision(d.decision, d.reasons, d.amount_micros, approved, reservation))
        return self._report(Decision(d.decision, d.reasons, d.amount_micros, d.decision == "allow", reservation))

    def _report(self, d: Decision) -> Decision:
        if self.on_decision:
            self.on_decision(d)
        return d

    async def before_payment_creation(self, ctx: Any) -> Any:
        """The x402Client hook: None pays, AbortResult refuses (the SDK raises PaymentAbortedError)."""
        from x402 import AbortResult

        try:
            d = await self.decide(_wire(ctx.payment_required), _wire(ctx.selected_requirements))
        except Exception as e:  # noqa: BLE001 - fail closed
            return AbortResult(reason=f"payguard: hold: guard failed: {e}")
        if d.approved:
            return None
        return AbortResult(reason=f"payguard: {d.decision}: " + "; ".join(d.reasons))

    def attach(self, client: Any) -> Any:
        """Register the guard on an official async x402Client (PyPI x402 2.x); returns the client."""
        if not hasattr(client, "on_before_payment_creation") or not hasattr(client, "create_payment_payload"):
            raise TypeError("payguard: attach() needs an x402Client from the x402 package")
        if not inspect.iscoroutinefunction(client.create_payment_payload):
            raise TypeError("payguard: the guard is async: use x402Client, not x402ClientSync")
        client.on_before_payment_creation(self.before_payment_creation)
        return client

    def spent(self) -> dict[str, str]:
        """Today's budget (reservations included)."""
        self.budget.rollover()
        return {"day": self.budget.day, "spent_usd": format_usd(self.budget.spent),
                "daily_cap_usd": format_usd(self.rules.daily_cap_usd)}


def _wire(model: Any) -> dict[str, Any]:
    """An SDK model in its wire (camelCase JSON) form."""
    if isinstance(model, dict):
        return model
    return model.model_dump(by_alias=True, mode="json", exclude_none=True)


def _combine(local: Outcome, remote: dict[str, Any]) -> Outcome:
    """The remote answer with the local caps: the stronger decision wins, every reason kept."""
    if not remote["ok"]:
        reasons = [f"hold: remote screening failed: {remote['error']}"] + [r for r in local.reasons if not r.startswith("allow:")]
        decision = local.decision if _RANK[local.decision] > _RANK["hold"] else "hold"
        return Outcome(decision, _order(reasons), local.chosen, local.amount_micros)
    decision = remote["decision"] if _RANK[remote["decision"]] > _RANK[local.decision] else local.decision
    merged = [r for r in dict.fromkeys(remote["reasons"] + local.reasons) if decision == "allow" or not r.startswith("allow:")]
    return Outcome(decision, _order(merged), local.chosen, local.amount_micros)


def _order(reasons: list[str]) -> list[str]:
    return sorted(reasons, key=lambda r: -_RANK.get(r.split(":", 1)[0], 2))


def guard(client: Any, rules: dict[str, Any] | None = None, **options: Any) -> Any:
    """Attach a new Guard to an official x402Client and return the client."""
    return Guard(rules, **options).attach(client)


def fee_guard(client: Any, *, pay_to: str, network: str, service_url: str, max_per_payment_usd: float | str = 0.02,
              daily_cap_usd: float | str = 1, now: Callable[[], datetime] | None = None) -> Any:
    """Guard the separate client that pays for remote screening: exactly the service's payTo, network and USDC,
    a small per-call cap and a budget of its own. Never reuse the merchant guard's client for this."""
    host = urlsplit(service_url).hostname or ""
    return guard(client, {
        "max_per_payment_usd": max_per_payment_usd, "hold_above_usd": max_per_payment_usd,
        "daily_cap_usd": daily_cap_usd, "allowed_networks": [network], "usdc_only": True,
        "strict_allowlist": True, "payto_allowlist": [pay_to], "domain_allowlist": [host],
        "screen_sanctions": False,  # the service's own wallet, pinned exactly above
    }, now=now)
