"""One decision for one x402 challenge, as the Go engine's preflight makes it (preflight/engine.go evaluate):
read the options, find the merchant domain, ask the screener about the judged payee, let policy decide."""

from __future__ import annotations

from typing import Any, Callable

from .policy import Outcome, evaluate, merchant_domain, option_facts, payee_index
from .rules import Rules

Screener = Callable[[str, str], tuple[dict[str, Any], dict[str, Any]]]


def challenge_domain(payment_required: dict[str, Any], accepts: list[dict[str, Any]], resource_url: str | None) -> str:
    """The v2 resource.url, else the first v1 requirement resource, else resource_url."""
    candidates: list[Any] = []
    v1 = payment_required.get("x402Version") == 1
    res = payment_required.get("resource")
    if not v1 and isinstance(res, dict):
        candidates.append(res.get("url"))
    if v1:
        candidates.extend(a.get("resource") for a in accepts if isinstance(a, dict))
    candidates.append(resource_url)
    for c in candidates:
        d = merchant_domain(c)
        if d:
            return d
    return ""


def decide_challenge(
    payment_required: dict[str, Any],
    accepts: list[dict[str, Any]],
    rules: Rules,
    spent_today: int = 0,
    screen: Screener | None = None,
    resource_url: str | None = None,
) -> Outcome:
    """Decide a challenge's options (wire-form dicts). screen(pay_to, domain) answers (sanctions, domain) facts;
    without one, sanctions data is unavailable and domain facts unknown."""
    version = 1 if payment_required.get("x402Version") == 1 else 2
    options = [option_facts(a if isinstance(a, dict) else {}, version) for a in accepts]
    domain = challenge_domain(payment_required, accepts, resource_url)
    sanctions: dict[str, Any] = {"state": "nothing"}
    domain_facts: dict[str, Any] = {}
    if options:
        judged = payee_index(options, rules)
        pay_to = options[judged].pay_to if judged >= 0 else ""
        s, d = screen(pay_to, domain) if screen else ({"state": "unavailable"}, {})
        domain_facts = d if domain else {}
        # As the engine: nothing to screen when the rule is off or no payee is judged (no merchant name here).
        sanctions = {"state": "nothing"} if not rules.screen_sanctions or pay_to == "" else s
    return evaluate(options, rules, domain, spent_today, sanctions, domain_facts)


def judged_challenge(payment_required: dict[str, Any], requested_url: str | None) -> dict[str, Any]:
    """The challenge as the guard judges it, the proxy's way (proxy/decide.go decisionChallenge): the merchant
    is the URL the agent requested, never the seller's claim. The v2 resource.url becomes that URL (empty when
    unknown: hold, could not determine merchant domain) and every v1 accepts[].resource is dropped."""
    out = dict(payment_required)
    if payment_required.get("x402Version") != 1:
        res = payment_required.get("resource")
        out["resource"] = {**(res if isinstance(res, dict) else {}), "url": requested_url or ""}
    accepts = payment_required.get("accepts")
    if isinstance(accepts, list):
        out["accepts"] = [strip_resource(a) for a in accepts]
    return out


def strip_resource(req: Any) -> Any:
    """A requirement without its own (v1) resource claim."""
    if not isinstance(req, dict) or "resource" not in req:
        return req
    return {k: v for k, v in req.items() if k != "resource"}
