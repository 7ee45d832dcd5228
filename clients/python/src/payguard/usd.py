"""Money as the Go engine keeps it: integer micro-dollars, parsed from decimal text exactly (policy.ParseUSD)."""

from __future__ import annotations

import re

MICROS_PER_USD = 1_000_000
_MAX_MICROS = 1_000_000_000_000 * MICROS_PER_USD  # one trillion dollars


def parse_usd(value: str | int | float) -> int:
    """Read "0.25", "1", "1e-2" or a number (through its shortest repr, so 0.05 is "0.05") into micro-dollars.

    More than six decimal places are accepted only when the extra digits are zeros; negative amounts, booleans
    and non-numbers raise ValueError.
    """
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise ValueError(f"not a decimal number of US dollars: {value!r}")
    s = repr(value) if isinstance(value, float) else str(value)
    s = s.strip()
    if s == "":
        raise ValueError("not a decimal number of US dollars: empty")
    if s[0] == "-":
        raise ValueError(f"not a decimal number of US dollars: {s!r} is negative")
    if s[0] == "+":
        s = s[1:]
    mant, exp = s, 0
    m = re.search(r"[eE]", s)
    if m:
        es = s[m.start() + 1 :]
        if not re.fullmatch(r"[+-]?[0-9]+", es) or not -30 <= int(es) <= 30:
            raise ValueError(f"not a decimal number of US dollars: {s!r}")
        mant, exp = s[: m.start()], int(es)
    int_part, _, frac = mant.partition(".")
    if (int_part == "" and frac == "") or not re.fullmatch(r"[0-9]*", int_part) or not re.fullmatch(r"[0-9]*", frac):
        raise ValueError(f"not a decimal number of US dollars: {s!r}")
    digits = (int_part + frac).lstrip("0")
    shift = 6 - (len(frac) - exp)
    if shift < 0:
        cut = min(-shift, len(digits))
        if digits[len(digits) - cut :].strip("0"):
            raise ValueError(f"not a decimal number of US dollars: {s!r} has more than six decimal places")
        digits = digits[: len(digits) - cut]
        shift = 0
    if digits == "":
        return 0
    if len(digits) + shift > 19:
        raise ValueError(f"not a decimal number of US dollars: {s!r} is too large")
    v = int(digits + "0" * shift)
    if v > _MAX_MICROS:
        raise ValueError(f"not a decimal number of US dollars: {s!r} is too large")
    return v


def format_usd(micros: int) -> str:
    """Write micro-dollars with as few decimals as needed ("0.25", "1", "0.000001"), as the reasons do."""
    neg = micros < 0
    micros = abs(micros)
    s = str(micros // MICROS_PER_USD)
    f = micros % MICROS_PER_USD
    if f:
        s += "." + f"{f:06d}".rstrip("0")
    return "-" + s if neg else s
