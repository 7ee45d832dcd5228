"""The rule set in SPEC's snake_case names, read over the defaults with the Go decoder's strictness: an unknown
name, a wrong type, a list over 100 entries or a negative threshold raises ValueError naming the rule."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .usd import format_usd, parse_usd

MAX_LIST_ENTRIES = 100
_MONEY = ("max_per_payment_usd", "hold_above_usd", "daily_cap_usd")
_FLAGS = ("usdc_only", "strict_allowlist", "screen_sanctions", "require_live", "hold_on_payto_change")
_LISTS = ("allowed_networks", "domain_allowlist", "domain_blocklist", "payto_allowlist", "payto_blocklist")


@dataclass
class Rules:
    """SPEC's rules; money in integer micro-dollars. Defaults: $1 per payment, hold above $0.25, $25 a day,
    Base USDC only."""

    max_per_payment_usd: int = 1_000_000
    hold_above_usd: int = 250_000
    daily_cap_usd: int = 25_000_000
    allowed_networks: list[str] = field(default_factory=lambda: ["eip155:8453", "base"])
    usdc_only: bool = True
    strict_allowlist: bool = False
    new_domain_days: int = 30
    screen_sanctions: bool = True
    max_price_multiple: float | None = 5.0
    require_live: bool = True
    hold_on_payto_change: bool = True
    domain_allowlist: list[str] = field(default_factory=list)
    domain_blocklist: list[str] = field(default_factory=list)
    payto_allowlist: list[str] = field(default_factory=list)
    payto_blocklist: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """The rules as the HTTP API takes them (remote screening); dollars as exact JSON numbers."""
        out: dict[str, Any] = {}
        for name in RULE_NAMES:
            v = getattr(self, name)
            out[name] = float(format_usd(v)) if name in _MONEY else v
        return out


RULE_NAMES = tuple(Rules.__dataclass_fields__)


def normalize_rules(given: dict[str, Any] | None = None) -> Rules:
    """Read a snake_case rules mapping over the defaults. Money takes numbers or decimal strings of dollars."""
    if given is None:
        given = {}
    if not isinstance(given, dict):
        raise ValueError("rules: not a mapping of rule names")
    r = Rules()
    for name, value in given.items():
        if name not in RULE_NAMES:
            raise ValueError(f'rules: unknown rule "{name}"')
        if value is None:
            if name == "max_price_multiple":
                r.max_price_multiple = None
                continue
            raise ValueError(f"rules: {name}: must not be null")
        if name in _MONEY:
            if isinstance(value, bool) or not isinstance(value, (int, float, str)):
                raise ValueError(f"rules: {name}: not a number of dollars")
            try:
                setattr(r, name, parse_usd(value))
            except ValueError as e:
                raise ValueError(f"rules: {name}: {e}") from None
        elif name in _FLAGS:
            if not isinstance(value, bool):
                raise ValueError(f"rules: {name}: not a boolean")
            setattr(r, name, value)
        elif name in _LISTS:
            if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
                raise ValueError(f"rules: {name}: not a list of strings")
            if len(value) > MAX_LIST_ENTRIES:
                raise ValueError(f"rules: {name}: has {len(value)} entries (at most {MAX_LIST_ENTRIES})")
            setattr(r, name, list(value))
        elif name == "new_domain_days":
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError("rules: new_domain_days: must be a non-negative integer")
            r.new_domain_days = value
        elif name == "max_price_multiple":
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
                raise ValueError("rules: max_price_multiple: must be positive or null")
            r.max_price_multiple = float(value)
    return r
