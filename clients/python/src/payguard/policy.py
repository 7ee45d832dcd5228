"""The decision, ported line for line from the Go engine (policy/evaluate.go, policy/match.go,
policy/reasons.go, preflight/options.go). Pure: facts in, decision and reasons out. The decision vectors
exported by the Go tests (testdata/vectors/decisions.json) hold it to the Go engine's answers."""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import idna

from .rules import Rules
from .usd import format_usd
from .x402facts import (
    caip2,
    is_evm_address,
    is_evm_network,
    is_known_usdc,
    is_solana_address,
    is_solana_network,
    parse_atomic,
    v1_name,
)

MAX_OPTIONS = 32
_RANK = {"allow": 0, "hold": 1, "block": 2}


def _rank(d: str) -> int:
    return _RANK.get(d, 2)  # anything unknown ranks as block: never taken for allow


Reason = tuple[str, str]  # (decision, text)


def _s(r: Reason) -> str:
    return f"{r[0]}: {r[1]}"


def _usd(m: int) -> str:
    return "$" + format_usd(m)


@dataclass
class Option:
    scheme: str
    network: str
    asset: str
    pay_to: str
    amount: str = "ok"  # ok | malformed | oversized | negative
    usd: int = 0
    known_usdc: bool = False
    network_ids: list[str] = field(default_factory=list)
    pay_to_malformed: bool = False
    v1: bool = False
    evm: bool = False

    @property
    def priced(self) -> bool:
        return self.amount == "ok" and self.known_usdc


def option_facts(req: dict[str, Any], version: int) -> Option:
    """The policy facts of one x402 payment option (preflight/options.go policyOption)."""

    def text(k: str) -> str:
        v = req.get(k)
        return v if isinstance(v, str) else ""

    o = Option(scheme=text("scheme"), network=text("network"), asset=text("asset"), pay_to=text("payTo"))
    amount_text = text("maxAmountRequired" if version == 1 else "amount")
    o.network_ids.append(o.network)
    cid = caip2(o.network)
    if cid:
        if cid != o.network:
            o.network_ids.append(cid)
        name = v1_name(cid)
        if name and name != o.network:
            o.network_ids.append(name)
    value, problem = parse_atomic(amount_text)
    if problem != "ok":
        nonfinite = amount_text.lstrip("+").lower() in ("nan", "inf", "infinity")
        o.amount = "negative" if problem == "malformed" and nonfinite else problem
    if is_known_usdc(o.network, o.asset):
        o.known_usdc = True
        if value is not None:
            o.usd = value  # six decimals: one atomic unit is one micro-dollar
    o.evm = is_evm_network(o.network)
    o.v1 = version == 1
    # A payee that cannot be the chain's address is malformed, on Solana (32-byte Base58 key) as on EVM.
    o.pay_to_malformed = o.pay_to != "" and (
        (o.evm and not is_evm_address(o.pay_to)) or (is_solana_network(o.network) and not is_solana_address(o.pay_to))
    )
    return o


def _canonical_ip(h: str) -> str | None:
    """An IP address's text as Go's netip writes it after Unmap and without zone (IPv6 compressed in lower
    case, an IPv4-mapped IPv6 address as the IPv4 address it reaches), so that a seller cannot escape a rule
    on its address by another spelling; None when h (brackets allowed) is no IP address."""
    s = h.removeprefix("[").removesuffix("]").split("%", 1)[0]
    try:
        a = ipaddress.ip_address(s)
    except ValueError:
        return None
    if isinstance(a, ipaddress.IPv6Address) and a.ipv4_mapped is not None:
        return str(a.ipv4_mapped)
    return str(a)


def _canonical_host(h: str) -> str:
    h = h.strip()
    ip = _canonical_ip(h)
    if ip is not None:
        return ip
    if not h.isascii():
        try:
            h = idna.encode(h, uts46=True, transitional=False).decode("ascii")
        except idna.IDNAError:
            pass
    h = h.lower()
    return h[:-1] if h.endswith(".") else h


def _is_ip(h: str) -> bool:
    try:
        ipaddress.ip_address(h)
        return True
    except ValueError:
        return False


def merchant_domain(s: Any) -> str:
    """The merchant host of a URL or a bare host (policy.MerchantDomain); "" when none can be read."""
    s = s.strip() if isinstance(s, str) else ""
    if s == "":
        return ""
    host = s
    if "://" in s:
        try:
            host = urlsplit(s).hostname or ""
        except ValueError:
            return ""
    else:
        host = re.split(r"[/?#]", host, maxsplit=1)[0]
        at = host.rfind("@")
        if at >= 0:
            host = host[at + 1 :]
        hp = re.fullmatch(r"(?:\[([^\[\]]*)\]|([^:\[\]]*)):([^:\[\]]*)", host)
        if hp:
            if hp.group(3) == "":
                return ""
            host = hp.group(1) if hp.group(1) is not None else hp.group(2)
        host = host.removeprefix("[").removesuffix("]")
        if ":" in host and not _is_ip(host):
            return ""
    host = _canonical_host(host)
    if host == "" or re.search(r"[ \t\r\n/\\@]", host):
        return ""
    return host


def _domain_listed(domain: str, entries: list[str]) -> bool:
    if domain == "":
        return False
    for e in entries:
        e = _canonical_host(e)
        if e and (domain == e or domain.endswith("." + e)):
            return True
    return False


def _evmish(s: str) -> bool:  # policy.isEVMAddress accepts "0X" too (payee lists)
    return re.fullmatch(r"0[xX][0-9a-fA-F]{40}", s) is not None


def _payee_listed(pay_to: str, entries: list[str]) -> bool:
    if pay_to == "":
        return False
    for e in entries:
        e = e.strip()
        if (pay_to.lower() == e.lower()) if (_evmish(pay_to) and _evmish(e)) else pay_to == e:
            return True
    return False


def _network_allowed(o: Option, allowed: list[str]) -> bool:
    ids = o.network_ids or [o.network]
    return any(i and any(a.strip().lower() == i.lower() for a in allowed) for i in ids)


@dataclass
class _Verdict:
    reasons: list[Reason] = field(default_factory=list)
    worst: str = "allow"

    def add(self, r: Reason) -> None:
        if r in self.reasons:
            return
        self.reasons.append(r)
        if _rank(r[0]) > _rank(self.worst):
            self.worst = r[0]


def _scheme_supported(o: Option) -> bool:
    """exact anywhere; upto only as an x402 v2 option on an EVM network (policy/schemes.go)."""
    return o.scheme == "exact" or (o.scheme == "upto" and not o.v1 and o.evm)


def _amount_word(o: Option) -> str:
    return "upto maximum" if o.scheme == "upto" else "amount"


_SCHEME_WHY = {
    "upto": "payment scheme upto is supported only in x402 v2 on an EVM network",
    "batch-settlement": "payment scheme batch-settlement is not supported: the seller redeems vouchers against a deposit "
    "after the request, so payguard cannot reconcile what is spent",
    "auth-capture": "payment scheme auth-capture is not supported: an operator captures, voids or refunds the escrowed "
    "authorization after the request, so payguard cannot reconcile what is spent",
}


def _scheme_unsupported(scheme: str) -> tuple[str, str]:
    if scheme in _SCHEME_WHY:
        return ("block", _SCHEME_WHY[scheme])
    name = scheme if re.fullmatch(r"[a-z0-9][a-z0-9_.-]{0,39}", scheme) else "(unreadable)"
    return ("block", f"payment scheme {name} is not supported")


def _judge(o: Option, r: Rules) -> _Verdict:
    v = _Verdict()
    malformed = ("block", "unsupported or malformed payment option")
    if not _scheme_supported(o):
        v.add(_scheme_unsupported(o.scheme))
    if o.amount in ("malformed", "oversized"):
        v.add(malformed)
    if o.amount == "negative":
        v.add(("block", "invalid payment amount"))
    if o.pay_to_malformed:
        v.add(malformed)
    if o.pay_to == "":
        v.add(("hold", "payment option has no payTo"))
    if not _network_allowed(o, r.allowed_networks):
        v.add(("block", f"network {o.network} not allowed"))
    if not o.known_usdc:
        if r.usdc_only:
            v.add(("block", f"asset {o.asset} is not a known USDC contract"))
        elif o.amount == "ok":
            v.add(("hold", "amount could not be priced in USD"))
    if o.priced and o.usd > r.max_per_payment_usd:
        v.add(("block", f"{_amount_word(o)} {_usd(o.usd)} exceeds max {_usd(r.max_per_payment_usd)}"))
    if _payee_listed(o.pay_to, r.payto_blocklist):
        v.add(("block", f"payTo {o.pay_to} is on blocklist"))
    elif r.strict_allowlist and r.payto_allowlist and o.pay_to and not _payee_listed(o.pay_to, r.payto_allowlist):
        v.add(("hold", f"payTo {o.pay_to} not on allowlist"))
    return v


def _choose(options: list[Option], r: Rules) -> tuple[int, int, _Verdict | None]:
    opts = options[:MAX_OPTIONS]
    chosen, rejected, best = -1, -1, None
    for i, o in enumerate(opts):
        v = _judge(o, r)
        if not v.reasons:
            if chosen < 0 or o.usd < opts[chosen].usd:
                chosen = i
            continue
        if rejected < 0 or _better_rejected(o, v, opts[rejected], best):
            rejected, best = i, v
    return chosen, rejected, best


def _better_rejected(o: Option, v: _Verdict, bo: Option, bv: _Verdict | None) -> bool:
    assert bv is not None
    if v.worst != bv.worst:
        return _rank(bv.worst) > _rank(v.worst)
    if o.priced != bo.priced:
        return o.priced
    return o.priced and o.usd < bo.usd


def _payee_of(chosen: int, rejected: int, best: _Verdict | None) -> int:
    if chosen < 0 and rejected >= 0 and best is not None and best.worst == "hold":
        return rejected
    return chosen


def payee_index(options: list[Option], rules: Rules) -> int:
    """The option whose payee is screened: the chosen one, or a held one a person may approve."""
    return _payee_of(*_choose(options, rules))


def select_index(options: list[Option], rules: Rules) -> int:
    """The option the engine decides on: the chosen one, else the best rejected one (held or blocked), so that
    a refusal names the engine's reasons; 0 when there is no usable option."""
    chosen, rejected, _ = _choose(options, rules)
    if chosen >= 0:
        return chosen
    return rejected if rejected >= 0 else 0


@dataclass
class Outcome:
    decision: str
    reasons: list[str]
    chosen: int
    amount_micros: int


def evaluate(
    options: list[Option],
    rules: Rules,
    merchant: str,
    spent_today: int = 0,
    sanctions: dict[str, Any] | None = None,
    domain: dict[str, Any] | None = None,
    merchant_name: str = "",
) -> Outcome:
    """policy.Evaluate. sanctions: {"state": "screened"|"unavailable"|"failed"|"nothing", "address_match",
    "name_exact", "name_possible"}; domain: {"age_days", "has_a", "failed"} (missing = unknown)."""
    if not options:
        return _finish(-1, 0, [("block", "no payment options found in input")])
    r = rules
    reasons: list[Reason] = []
    blocked = _domain_listed(merchant, r.domain_blocklist)
    allowed = not blocked and _domain_listed(merchant, r.domain_allowlist)
    if merchant == "":
        reasons.append(("hold", "could not determine merchant domain"))
    elif blocked:
        reasons.append(("block", f"domain {merchant} is on blocklist"))
    elif r.strict_allowlist and not allowed:
        reasons.append(("hold", f"domain {merchant} not on allowlist"))

    chosen, rejected, best = _choose(options, r)
    payee = _payee_of(chosen, rejected, best)
    if r.screen_sanctions:
        s = sanctions or {"state": "unavailable"}
        state = s.get("state")
        if state == "screened":
            if s.get("address_match") and payee >= 0:
                reasons.append(("block", f"payTo {options[payee].pay_to} is an OFAC SDN-listed address"))
            if s.get("name_exact"):
                reasons.append(("block", "merchant name exactly matches an OFAC SDN entry"))
            elif s.get("name_possible"):
                reasons.append(("hold", "merchant name possibly matches an OFAC SDN entry"))
        elif state == "failed":
            reasons.append(("hold", "sanctions screening failed"))
        elif state != "nothing" and (payee >= 0 or merchant_name):
            reasons.append(("hold", "sanctions data unavailable"))
    if merchant:
        d = domain or {}
        age = d.get("age_days")
        if isinstance(age, int) and not isinstance(age, bool) and age < r.new_domain_days and not allowed:
            reasons.append(("hold", f"domain registered {age} days ago (< {r.new_domain_days})"))
        if d.get("has_a") is False:
            reasons.append(("hold", "domain has no DNS A record"))
        if d.get("failed"):
            reasons.append(("hold", "domain screening failed"))
    cap = ("block", f"daily cap {_usd(r.daily_cap_usd)} would be exceeded (spent {_usd(spent_today)})")
    if chosen < 0:
        assert best is not None
        reasons.extend(best.reasons)
        if payee < 0:
            return _finish(-1, 0, reasons)
        # A held option is the one a person approves: the hold carries it and its amount (SPEC 4.2).
        o = options[payee]
        held = o.usd if o.priced else 0
        if o.priced and o.usd > r.daily_cap_usd - spent_today:
            reasons.append(cap)
        return _finish(payee, held, reasons)
    amount = options[chosen].usd
    if amount > r.hold_above_usd:
        reasons.append(("hold", f"{_amount_word(options[chosen])} {_usd(amount)} above hold threshold {_usd(r.hold_above_usd)}"))
    if amount > r.daily_cap_usd - spent_today:
        reasons.append(cap)
    return _finish(chosen, amount, reasons)


def _finish(chosen: int, amount: int, reasons: list[Reason]) -> Outcome:
    if not reasons:
        return Outcome("allow", ["allow: all rules passed"], chosen, amount)
    ordered = sorted(reasons, key=lambda x: -_rank(x[0]))  # stable: evaluation order within a decision
    uniq = list(dict.fromkeys(_s(x) for x in ordered))
    top = ordered[0][0]
    return Outcome(top if top in _RANK else "block", uniq, chosen, amount)
