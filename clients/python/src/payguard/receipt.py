"""verify_receipt: offline verification of a payguard receipt against pinned keys, accepting exactly what
`payguard verify-receipt` accepts (receipts/verify.go): an ES256 compact JWS of type "payguard-receipt+jws"
by a pinned key, at most one hour old with 60 s of clock tolerance (archival mode drops only the age check),
or a whole PreflightResult whose every field equals the signed payload. No network request is made. The
receipt vectors (testdata/vectors/receipts.json) hold it to the Go verifier."""

from __future__ import annotations

import base64
import binascii
import json
import re
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from decimal import Decimal, InvalidOperation
from typing import Any, Callable, Union

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

RECEIPT_TYPE = "payguard-receipt+jws"
DEFAULT_MAX_AGE = timedelta(hours=1)
LEEWAY = timedelta(seconds=60)
# n/2 for P-256: an ECDSA S above it is "high".
_P256_HALF_ORDER = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551 >> 1


class ReceiptError(ValueError):
    """Why a receipt was refused; kind is one of the vectors' names (malformed, expired, field_altered, ...)."""

    def __init__(self, kind: str, message: str):
        super().__init__(f"receipt invalid ({kind}): {message}")
        self.kind = kind


@dataclass
class Claims:
    key_id: str
    id: str
    issued_at: datetime
    decision: str
    input_sha256: str


class _Num:
    """A JSON number kept as its text, equal to another by value (receipts/compare.go)."""

    def __init__(self, text: str):
        self.text = text

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Num) and Decimal(self.text) == Decimal(other.text)

    __hash__ = None  # type: ignore[assignment]


class _Repeated(ValueError):
    pass


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _pairs(reject: bool) -> Callable[[list[tuple[str, Any]]], dict[str, Any]]:
    def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for k, v in pairs:
            if reject and k in out:
                raise _Repeated(f'member "{k}" appears twice in one object')
            out[k] = v
        return out

    return hook


def _loads(text: str, reject_repeats: bool = False) -> Any:
    return json.loads(text, parse_float=_Num, parse_int=_Num, parse_constant=_no_constants,
                      object_pairs_hook=_pairs(reject_repeats))


def _b64url(s: str) -> bytes:
    if not re.fullmatch(r"[A-Za-z0-9_-]*", s) or len(s) % 4 == 1:
        raise binascii.Error("not base64url")
    return base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))


def _public_keys(jwks: str | bytes | dict[str, Any]) -> dict[str, ec.EllipticCurvePublicKey]:
    try:
        doc = jwks if isinstance(jwks, dict) else json.loads(jwks)
    except ValueError as e:
        raise ReceiptError("bad_key_set", f"not a JWK Set: {e}") from None
    keys: dict[str, ec.EllipticCurvePublicKey] = {}
    for k in doc.get("keys", []) if isinstance(doc, dict) and isinstance(doc.get("keys"), list) else []:
        if not isinstance(k, dict) or k.get("kty") != "EC" or k.get("crv") != "P-256":
            continue
        kid = k.get("kid")
        if not isinstance(kid, str) or kid == "":
            continue
        try:
            x, y = (int.from_bytes(_b64url(k[c]), "big") for c in ("x", "y"))
            keys[kid] = ec.EllipticCurvePublicNumbers(x, y, ec.SECP256R1()).public_key()
        except (KeyError, TypeError, ValueError, binascii.Error):
            raise ReceiptError("bad_key_set", f"key {kid} is not a P-256 point") from None
    if not keys:
        raise ReceiptError("bad_key_set", "no P-256 key with a kid")
    return keys


def _member(obj: dict[str, Any], name: str) -> Any:
    """A struct field as encoding/json reads it: the exact name, else one equal under case folding."""
    if name in obj:
        return obj[name]
    for k, v in obj.items():
        if k.lower() == name.lower():
            return v
    return None


_RFC3339 = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})(?:[.,]([0-9]+))?(Z|([+-])([0-9]{2}):([0-9]{2}))")


def _parse_rfc3339(s: str) -> datetime | None:
    """Go's time.Parse(time.RFC3339)."""
    m = _RFC3339.fullmatch(s)
    if not m:
        return None
    try:
        y, mo, d, h, mi, sec = (int(m.group(i)) for i in range(1, 7))
        t = datetime(y, mo, d, h, mi, sec, tzinfo=timezone.utc)
    except ValueError:
        return None
    if m.group(7):
        t += timedelta(microseconds=int((m.group(7) + "000000")[:6]))
    if m.group(8) != "Z":
        oh, om = int(m.group(10)), int(m.group(11))
        if oh > 23 or om > 59:
            return None
        off = timedelta(hours=oh, minutes=om)
        t -= off if m.group(9) == "+" else -off
    return t


def _issued_at(payload: str) -> tuple[datetime, dict[str, str]]:
    def no_ts(why: str) -> ReceiptError:
        return ReceiptError("no_timestamp", why)

    try:
        p = _loads(payload)
    except ValueError as e:
        raise no_ts(f"payload is not a JSON result: {e}") from None
    if p is None:
        raise no_ts("neither receipt.ts nor iat is present")
    if not isinstance(p, dict):
        raise no_ts("payload is not a JSON object")

    def is_str(v: Any) -> bool:
        return v is None or isinstance(v, str)

    decision, iat, receipt = _member(p, "decision"), _member(p, "iat"), _member(p, "receipt")
    receipt = {} if receipt is None else receipt
    if not is_str(decision):
        raise no_ts("decision is not a string")
    if iat is not None and not (isinstance(iat, _Num) and re.fullmatch(r"-?[0-9]+", iat.text)):
        raise no_ts("iat is not an integer")
    if not isinstance(receipt, dict):
        raise no_ts("receipt is not an object")
    rid, ts, sha, _ = (_member(receipt, f) for f in ("id", "ts", "input_sha256", "decision"))
    if not all(is_str(v) for v in (rid, ts, sha, _)):
        raise no_ts("a receipt field is not a string")
    claims = {"id": rid or "", "decision": decision or "", "input_sha256": sha or ""}
    if ts:
        t = _parse_rfc3339(ts)
        if t is None:
            raise no_ts(repr(ts))
        return t, claims
    if iat is not None:
        return datetime.fromtimestamp(int(iat.text), timezone.utc), claims
    raise no_ts("neither receipt.ts nor iat is present")


Now = Union[datetime, float, int, Callable[[], datetime], None]


def _current(now: Now) -> datetime:
    """The `now` option as users pass it: a clock function, a timezone-aware datetime, or epoch seconds."""
    v = now() if callable(now) else now
    if v is None:
        return datetime.now(timezone.utc)
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return datetime.fromtimestamp(v, timezone.utc)
    if isinstance(v, datetime):
        if v.tzinfo is None or v.utcoffset() is None:
            raise TypeError("verify_receipt: now must be timezone-aware (e.g. datetime.now(timezone.utc))")
        return v
    raise TypeError("verify_receipt: now must be a datetime, epoch seconds, or a function returning a datetime")


def _max_age(max_age: timedelta | float | int | None) -> timedelta:
    """max_age as a timedelta or a number of seconds; None or zero is the default (one hour)."""
    if max_age is None:
        return DEFAULT_MAX_AGE
    if isinstance(max_age, (int, float)) and not isinstance(max_age, bool):
        max_age = timedelta(seconds=max_age)
    if isinstance(max_age, timedelta) and max_age == timedelta(0):
        return DEFAULT_MAX_AGE
    if not isinstance(max_age, timedelta) or max_age < timedelta(0):
        raise TypeError("verify_receipt: max_age must be a positive timedelta or number of seconds")
    return max_age


def verify_jws(jws: str, jwks: Any, *, archival: bool = False, max_age: timedelta | float | None = None,
               now: Now = None) -> tuple[str, Claims]:
    """Check a compact JWS receipt; return (payload text, claims). Raises ReceiptError."""
    keys = _public_keys(jwks)
    parts = jws.strip().split(".")
    if len(parts) != 3:
        raise ReceiptError("malformed", f"{len(parts)} dot-separated parts (want 3)")
    try:
        hdr = json.loads(_b64url(parts[0]).decode("utf-8"), parse_constant=_no_constants)
    except (ValueError, binascii.Error) as e:
        raise ReceiptError("malformed", f"header: {e}") from None
    if not isinstance(hdr, dict):
        raise ReceiptError("malformed", "header is not an object")
    alg, kid, typ = (_member(hdr, k) for k in ("alg", "kid", "typ"))
    if any(v is not None and not isinstance(v, str) for v in (alg, kid, typ)):
        raise ReceiptError("malformed", "header member is not a string")
    if alg != "ES256":
        raise ReceiptError("algorithm", f"alg is {alg!r}")
    if typ != RECEIPT_TYPE:
        raise ReceiptError("type", f"typ is {typ!r}")
    key = keys.get(kid or "")
    if key is None:
        raise ReceiptError("unknown_key", f"kid {kid!r} is not in the pinned key set")
    try:
        payload_bytes, sig = _b64url(parts[1]), _b64url(parts[2])
    except binascii.Error:
        raise ReceiptError("malformed", "payload or signature is not base64url") from None
    # One decision, one valid receipt: ECDSA's (r, n-s) twin verifies too, so only the low-S signature (what
    # payguard writes) is accepted, as receipts/verify.go does.
    if len(sig) == 64 and int.from_bytes(sig[32:], "big") > _P256_HALF_ORDER:
        raise ReceiptError("signature", f"high-S signature (kid {kid!r}); receipts carry the low-S one")
    try:
        if len(sig) != 64:
            raise InvalidSignature()
        der = encode_dss_signature(int.from_bytes(sig[:32], "big"), int.from_bytes(sig[32:], "big"))
        key.verify(der, f"{parts[0]}.{parts[1]}".encode(), ec.ECDSA(hashes.SHA256()))
    except InvalidSignature:
        raise ReceiptError("signature", f"signature does not verify (kid {kid!r})") from None
    payload = payload_bytes.decode("utf-8", errors="replace")
    issued, c = _issued_at(payload)
    current = _current(now)
    if issued > current + LEEWAY:
        raise ReceiptError("not_yet_valid", "receipt is dated in the future")
    limit = _max_age(max_age)
    if not archival and current - issued > limit + LEEWAY:
        raise ReceiptError("expired", "receipt is older than the maximum age")
    return payload, Claims(key_id=kid or "", issued_at=issued, **c)


def _first_difference(path: str, got: Any, want: Any) -> str:
    root = path or "(whole result)"
    if isinstance(want, dict):
        if not isinstance(got, dict):
            return root
        for k in sorted(set(want) | set(got), key=lambda s: s.encode()):
            sub = f"{path}.{k}" if path else k
            if (k in got) != (k in want):
                return sub
            d = _first_difference(sub, got[k], want[k])
            if d:
                return d
        return ""
    if isinstance(want, list):
        if not isinstance(got, list) or len(got) != len(want):
            return root
        for i, (g, w) in enumerate(zip(got, want)):
            d = _first_difference(f"{path}[{i}]", g, w)
            if d:
                return d
        return ""
    if isinstance(want, _Num):
        try:
            return "" if isinstance(got, _Num) and got == want else root
        except InvalidOperation:
            return root
    return "" if type(got) is type(want) and got == want else root


def verify_receipt(receipt: str | dict[str, Any], jwks: Any, *, archival: bool = False,
                   max_age: timedelta | float | None = None, now: Now = None) -> Claims:
    """Verify what `payguard verify-receipt` reads: a whole PreflightResult (JSON text or a dict) field by field
    against its signed receipt.jws, or a bare compact JWS. Returns the claims; raises ReceiptError."""
    text = receipt.strip() if isinstance(receipt, str) else json.dumps(receipt)
    if not text.startswith("{"):
        return verify_jws(text, jwks, archival=archival, max_age=max_age, now=now)[1]
    try:
        result = _loads(text, reject_repeats=True)
    except ValueError as e:
        raise ReceiptError("result_invalid", str(e)) from None
    rcpt = result.get("receipt") if isinstance(result, dict) else None
    jws = rcpt.get("jws") if isinstance(rcpt, dict) else None
    if not isinstance(rcpt, dict) or not isinstance(jws, str) or jws == "":
        raise ReceiptError("result_invalid", "the result has no receipt.jws")
    payload, claims = verify_jws(jws, jwks, archival=archival, max_age=max_age, now=now)
    del rcpt["jws"]
    try:
        signed = _loads(payload)
    except ValueError as e:
        raise ReceiptError("result_invalid", f"signed payload is not a JSON object: {e}") from None
    if not isinstance(signed, dict):
        raise ReceiptError("result_invalid", "signed payload is not a JSON object")
    field = _first_difference("", result, signed)
    if field:
        err = ReceiptError("field_altered", f'field "{field}" differs from the signed payload')
        err.field = field  # type: ignore[attr-defined]
        raise err
    return claims
