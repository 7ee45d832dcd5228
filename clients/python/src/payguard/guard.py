"""The guard: payguard's decision inside the agent's process, in the official x402 Python client's hooks, so a
payment the rules refuse is never signed (SPEC "Client guard libraries").

Where it sits: on an x402HTTPClient (what x402HttpxClient and the requests adapter drive) the guard registers
on_payment_required, which sees the challenge and the URL the agent requested (the response URL, after
redirects): it decides there, on the option the engine would choose, with that URL as the merchant, and a
refusal raises PaymentRefused straight to the caller. A payment policy steers the SDK's selection to the
approved option, and the before-payment-creation hook lets only that option be signed. On a bare x402Client
the guard cannot see the URL: it decides in the before-payment-creation hook with the merchant domain unknown
(hold: could not determine merchant domain), never on the seller's resource.url."""

from __future__ import annotations

import inspect
import weakref
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Awaitable, Callable, Generic, TypeVar, Union
from urllib.parse import urlsplit

import httpx

from .budget import Budget, Reservation
from .decide import decide_challenge, judged_challenge, strip_resource
from .policy import Outcome, option_facts, select_index
from .remote import remote_screen
from .rules import normalize_rules
from .usd import format_usd

_RANK = {"allow": 0, "hold": 1, "block": 2}

try:  # x402HttpxClient lets its own PaymentError through unwrapped: a refusal reaches the caller as raised.
    from x402.http.clients.httpx import PaymentError as _RefusalBase
except ImportError:  # pragma: no cover - x402 without its httpx client
    _RefusalBase = Exception  # type: ignore[misc,assignment]


@dataclass
class Decision:
    decision: str
    reasons: list[str]
    amount_micros: int
    approved: bool
    reservation: Reservation | None = field(default=None, repr=False)
    url: str | None = None
    receipt: dict[str, Any] | None = None

    @property
    def amount_usd(self) -> str:
        return format_usd(self.amount_micros)

    def event(self) -> dict[str, Any]:
        """The decision as on_decision is told it: plain JSON types only."""
        out: dict[str, Any] = {"decision": self.decision, "reasons": list(self.reasons), "amount_usd": self.amount_usd,
                               "amount_micros": self.amount_micros, "approved": self.approved, "url": self.url}
        if self.receipt is not None:
            out["receipt"] = self.receipt
        return out


class PaymentRefused(_RefusalBase):
    """A payment payguard refused: decision ("hold" or "block"), reasons (SPEC 5 strings, each "decision: text"),
    the amount, the URL judged, and the signed receipt when payguard serve decided (None for a local decision)."""

    def __init__(self, d: Decision) -> None:
        super().__init__("payguard: " + "; ".join(d.reasons))
        self.decision: str = d.decision
        self.reasons: list[str] = list(d.reasons)
        self.amount_usd: str = d.amount_usd
        self.url: str | None = d.url
        self.receipt: dict[str, Any] | None = d.receipt


OnHold = Callable[[dict[str, Any]], Union[bool, Awaitable[bool]]]
OnDecision = Callable[[dict[str, Any]], Any]
_K = TypeVar("_K")
_V = TypeVar("_V")


class _ByObject(Generic[_K, _V]):
    """A map keyed by object identity that forgets an entry when its key object goes (SDK models are unhashable)."""

    def __init__(self) -> None:
        self._d: dict[int, tuple[weakref.ref[Any], _V]] = {}

    def set(self, key: _K, value: _V) -> None:
        k = id(key)

        def forget(_ref: weakref.ref[Any]) -> None:
            self._d.pop(k, None)

        self._d[k] = (weakref.ref(key, forget), value)

    def get(self, key: _K) -> _V | None:
        hit = self._d.get(id(key))
        return hit[1] if hit is not None and hit[0]() is key else None

    def pop(self, key: _K) -> _V | None:
        v = self.get(key)
        if v is not None:
            self._d.pop(id(key), None)
        return v


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
    on_decision: told every decision as a JSON-serialisable dict; what it raises is ignored.
    """

    def __init__(self, rules: dict[str, Any] | None = None, *, remote: bool = False, remote_url: str | None = None,
                 remote_client: httpx.AsyncClient | None = None, on_hold: OnHold | None = None,
                 on_error: str = "hold", now: Callable[[], datetime] | None = None,
                 on_decision: OnDecision | None = None):
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
        self._urls: _ByObject[Any, str] = _ByObject()
        self._tickets: _ByObject[Any, tuple[dict[str, Any], Reservation | None]] = _ByObject()
        self._approved: list[dict[str, Any]] = []  # approved options not yet signed (steer the SDK's selection)
        self._attached: list[Any] = []

    async def decide(self, payment_required: dict[str, Any], selected: dict[str, Any] | None,
                     resource_url: str | None = None) -> Decision:
        """Judge one selected offer (wire-form dicts) for the URL the agent requested (resource_url; unknown: the
        merchant domain is unknown and the decision holds), reserving its amount when approved. Serialized. The
        challenge's resource.url (or v1 accepts[].resource) is the seller's claim and is never judged."""
        return self._report(await self._decide(payment_required, selected, resource_url))

    async def _decide(self, payment_required: dict[str, Any], selected: dict[str, Any] | None,
                      resource_url: str | None) -> Decision:
        url = resource_url or None
        judged = judged_challenge(payment_required, url)
        offer = strip_resource(selected) if selected is not None else None
        accepts = [offer] if offer is not None else []
        remote = None
        if self.remote and offer is not None:
            assert self.remote_url is not None
            remote = await remote_screen(self.remote_url, self.remote_client, judged, offer, self.rules, url)
        waived = remote is not None and not remote["ok"] and self.on_error == "allow"
        screened = remote is not None and (remote["ok"] or waived)
        async with self.budget.lock():
            local = decide_challenge(
                judged, accepts, self.rules, self.budget.spent_today(),
                # Without remote facts sanctions data is unavailable: with screen_sanctions on, that holds.
                screen=(lambda pay_to, domain: ({"state": "nothing"}, {})) if screened else None,
                resource_url=url,
            )
            d = _combine(local, remote) if remote is not None and not waived else local
            # A hold reserves too (its option's amount), so that concurrent decisions see it while a person decides.
            reservation = None if d.decision == "block" else self.budget.reserve(d.amount_micros)
        receipt = (remote.get("result") or {}).get("receipt") if remote is not None and remote["ok"] else None
        if d.decision == "hold":
            approved = False
            if self.on_hold is not None:
                try:
                    answer = self.on_hold({"decision": d.decision, "reasons": d.reasons,
                                           "amount_usd": format_usd(d.amount_micros), "requirements": selected,
                                           "payment_required": payment_required, "url": url})
                    approved = (await answer if inspect.isawaitable(answer) else answer) is True
                except Exception:  # noqa: BLE001 - a failing approver refuses
                    approved = False
            if not approved:
                await self._release(reservation)
            return Decision(d.decision, d.reasons, d.amount_micros, approved, reservation, url, receipt)
        return Decision(d.decision, d.reasons, d.amount_micros, d.decision == "allow", reservation, url, receipt)

    async def _release(self, reservation: Reservation | None) -> None:
        if reservation is not None:
            async with self.budget.lock():
                self.budget.release(reservation)

    def _report(self, d: Decision) -> Decision:
        """Tell on_decision (a failure there is the callback's, never the payment's)."""
        if self.on_decision is not None:
            try:
                r = self.on_decision(d.event())
                if inspect.isawaitable(r):
                    _swallow(r)
            except Exception:  # noqa: BLE001 - logging must not move money
                pass
        return d

    def _refused(self, decision: str, reason: str) -> PaymentRefused:
        return PaymentRefused(self._report(Decision(decision, [reason], 0, False)))

    async def on_payment_required(self, ctx: Any) -> None:
        """The x402HTTPClient hook: learns the URL the agent requested and decides the challenge there, on the
        option the engine would choose; a refusal raises PaymentRefused."""
        pr_model = ctx.payment_required
        url = ctx.request_url if isinstance(ctx.request_url, str) and ctx.request_url else None
        if url is not None:
            self._urls.set(pr_model, url)
        pr = _wire(pr_model)
        accepts = [a for a in (pr.get("accepts") or []) if isinstance(a, dict)]
        selected = accepts[self._select(pr.get("x402Version"), accepts)] if accepts else None
        try:
            d = await self._decide(pr, selected, url)
        except Exception as e:  # noqa: BLE001 - fail closed
            raise self._refused("hold", f"hold: guard failed: {e}") from e
        self._report(d)
        if not d.approved:
            raise PaymentRefused(d)
        assert selected is not None
        self._tickets.set(pr_model, (selected, d.reservation))
        self._approved.append(selected)
        del self._approved[:-64]  # approvals never signed (a request abandoned after the decision) age out

    def policy(self, x402_version: int, requirements: list[Any]) -> list[Any]:
        """The x402Client payment policy: the SDK's selection narrowed to the option payguard approved, else to
        the one the engine would choose (cheapest acceptable, SPEC 4.2)."""
        wires = [_wire(r) for r in requirements]
        for i, w in enumerate(wires):
            if any(_same_terms(a, w) for a in self._approved):
                return [requirements[i]]
        return [requirements[self._select(x402_version, wires)]] if requirements else requirements

    def _select(self, version: Any, accepts: list[dict[str, Any]]) -> int:
        v = 1 if version == 1 else 2
        return select_index([option_facts(a, v) for a in accepts], self.rules)

    async def before_payment_creation(self, ctx: Any) -> Any:
        """The x402Client hook: None pays; a refusal raises PaymentRefused (nothing is signed)."""
        ticket = self._tickets.pop(ctx.payment_required)
        selected = _wire(ctx.selected_requirements)
        if ticket is not None:
            approved, reservation = ticket
            if approved in self._approved:
                self._approved.remove(approved)
            if _same_terms(approved, selected):
                return None
            await self._release(reservation)
            raise self._refused("block", "block: the client selected another option than the one payguard approved")
        try:
            d = await self._decide(_wire(ctx.payment_required), selected, self._urls.get(ctx.payment_required))
        except Exception as e:  # noqa: BLE001 - fail closed
            raise self._refused("hold", f"hold: guard failed: {e}") from e
        self._report(d)
        if d.approved:
            return None
        raise PaymentRefused(d)

    def attach(self, target: Any) -> Any:
        """Register the guard on an official async client (PyPI x402 2.x) and return it: an x402HTTPClient (the
        guard then sees the requested URL) or a bare x402Client (it cannot: payments hold on the unknown domain)."""
        http = target if hasattr(target, "on_payment_required") and hasattr(target, "_client") else None
        client = target._client if http is not None else target
        if not hasattr(client, "on_before_payment_creation") or not hasattr(client, "create_payment_payload"):
            raise TypeError("payguard: attach() needs an x402HTTPClient or x402Client from the x402 package")
        if not inspect.iscoroutinefunction(client.create_payment_payload):
            raise TypeError("payguard: the guard is async: use x402Client, not x402ClientSync")
        if not any(c is client for c in self._attached):
            self._attached.append(client)
            client.on_before_payment_creation(self.before_payment_creation)
            if hasattr(client, "register_policy"):
                client.register_policy(self.policy)
        if http is not None and not any(c is http for c in self._attached):
            self._attached.append(http)
            http.on_payment_required(self.on_payment_required)
        return target

    def spent(self) -> dict[str, str]:
        """Today's budget (reservations included)."""
        self.budget.rollover()
        return {"day": self.budget.day, "spent_usd": format_usd(self.budget.spent),
                "daily_cap_usd": format_usd(self.rules.daily_cap_usd)}


def _swallow(awaitable: Any) -> None:
    """Run an async on_decision's result to completion in the background, ignoring what it raises."""
    import asyncio

    async def run() -> None:
        try:
            await awaitable
        except Exception:  # noqa: BLE001
            pass

    task = asyncio.ensure_future(run())
    _background.add(task)
    task.add_done_callback(_background.discard)


_background: set[Any] = set()


def _same_terms(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """The selected option pays exactly what was approved (scheme, network, asset, payee, amount)."""
    def key(r: dict[str, Any]) -> tuple[Any, ...]:
        return (r.get("scheme"), r.get("network"), str(r.get("asset", "")).lower(), str(r.get("payTo", "")).lower(),
                r.get("amount", r.get("maxAmountRequired")))
    return key(a) == key(b)


def _wire(model: Any) -> dict[str, Any]:
    """An SDK model in its wire (camelCase JSON) form."""
    if isinstance(model, dict):
        return model
    wire: dict[str, Any] = model.model_dump(by_alias=True, mode="json", exclude_none=True)
    return wire


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
    """Attach a new Guard to an official x402HTTPClient (or bare x402Client) and return it. Give it the HTTP
    client the httpx wrapper uses, so that it judges the URL the agent requested:
    x402HttpxClient(guard(x402HTTPClient(client), rules))."""
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
