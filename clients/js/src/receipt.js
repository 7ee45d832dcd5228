// verifyReceipt: offline verification of a payguard receipt against pinned keys, accepting exactly what
// `payguard verify-receipt` accepts (receipts/verify.go): an ES256 compact JWS of type
// "payguard-receipt+jws" by a pinned key, at most one hour old with 60 s of clock tolerance (archival mode
// drops only the age check), or a whole PreflightResult whose every field equals the signed payload. No
// network request is made. The receipt vectors (testdata/vectors/receipts.json) hold it to the Go verifier.

import { createPublicKey, verify } from 'node:crypto';
import { Num, RepeatedNameError, TrailingDataError, firstDifference, parseExact } from './json-exact.js';

export const RECEIPT_TYPE = 'payguard-receipt+jws';
const DEFAULT_MAX_AGE_S = 3600;
const LEEWAY_MS = 60_000;

/** ReceiptError says why a receipt was refused; kind is one of the vectors' names (malformed, expired, ...). */
export class ReceiptError extends Error {
  constructor(kind, message) {
    super(`receipt invalid (${kind}): ${message}`);
    this.kind = kind;
  }
}

const b64urlOK = (s) => /^[A-Za-z0-9_-]*$/.test(s) && s.length % 4 !== 1;
const b64url = (s) => Buffer.from(s, 'base64url');

// publicKeys reads a JWK Set: P-256 keys with a kid (private parts ignored), by kid.
function publicKeys(jwks) {
  let set;
  try {
    set = typeof jwks === 'string' ? JSON.parse(jwks) : jwks;
  } catch (e) {
    throw new ReceiptError('bad_key_set', `not a JWK Set: ${e.message}`);
  }
  const keys = new Map();
  for (const k of Array.isArray(set?.keys) ? set.keys : []) {
    if (k?.kty !== 'EC' || k.crv !== 'P-256' || typeof k.kid !== 'string' || k.kid === '') continue;
    try {
      keys.set(k.kid, createPublicKey({ key: { kty: 'EC', crv: 'P-256', x: k.x, y: k.y }, format: 'jwk' }));
    } catch {
      throw new ReceiptError('bad_key_set', `key ${k.kid} is not a P-256 point`);
    }
  }
  if (keys.size === 0) throw new ReceiptError('bad_key_set', 'no P-256 key with a kid');
  return keys;
}

// Go's time.Parse(time.RFC3339): strict fields, optional fraction, Z or a numeric offset.
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:[.,](\d+))?(Z|([+-])(\d{2}):(\d{2}))$/;
function parseRFC3339(s) {
  const m = RFC3339.exec(s);
  if (!m) return null;
  const [y, mo, d, h, mi, se] = m.slice(1, 7).map(Number);
  const dim = new Date(Date.UTC(y, mo, 0)).getUTCDate();
  if (mo < 1 || mo > 12 || d < 1 || d > dim || h > 23 || mi > 59 || se > 59) return null;
  let ms = Date.UTC(y, mo - 1, d, h, mi, se);
  if (y < 100) ms = new Date(ms).setUTCFullYear(y);
  if (m[7]) ms += Number((m[7] + '000').slice(0, 3));
  if (m[8] !== 'Z') {
    const oh = Number(m[10]), om = Number(m[11]);
    if (oh > 23 || om > 59) return null;
    ms -= (m[9] === '-' ? -1 : 1) * (oh * 60 + om) * 60_000;
  }
  return ms;
}

// member reads a struct field as encoding/json does: the exact name, else a name equal under case folding.
function member(obj, name) {
  if (name in obj) return obj[name];
  const k = Object.keys(obj).find((x) => x.toLowerCase() === name.toLowerCase());
  return k === undefined ? undefined : obj[k];
}

// issuedAt reads receipt.ts (or a numeric iat) from the payload as receipts.signedPayload does.
function issuedAt(payloadText) {
  const noTS = (why) => new ReceiptError('no_timestamp', why);
  let p;
  try {
    p = parseExact(payloadText);
  } catch (e) {
    throw noTS(`payload is not a JSON result: ${e.message}`);
  }
  if (p === null) throw noTS('neither receipt.ts nor iat is present');
  if (typeof p !== 'object' || Array.isArray(p) || p instanceof Num) throw noTS('payload is not a JSON object');
  const isStr = (v) => v === undefined || v === null || typeof v === 'string';
  const decision = member(p, 'decision');
  const iat = member(p, 'iat');
  const receipt = member(p, 'receipt') ?? {};
  if (!isStr(decision)) throw noTS('decision is not a string');
  if (iat !== undefined && iat !== null && !(iat instanceof Num && /^-?\d+$/.test(iat.text))) throw noTS('iat is not an integer');
  if (typeof receipt !== 'object' || Array.isArray(receipt) || receipt instanceof Num) throw noTS('receipt is not an object');
  const fields = ['id', 'ts', 'input_sha256', 'decision'].map((f) => member(receipt, f));
  if (!fields.every(isStr)) throw noTS('a receipt field is not a string');
  const ts = fields[1];
  if (ts) {
    const ms = parseRFC3339(ts);
    if (ms === null) throw noTS(JSON.stringify(ts));
    return { ms, claims: { id: fields[0] ?? '', decision: decision ?? '', inputSha256: fields[2] ?? '' } };
  }
  if (iat instanceof Num) return { ms: Number(BigInt(iat.text) * 1000n), claims: { id: fields[0] ?? '', decision: decision ?? '', inputSha256: fields[2] ?? '' } };
  throw noTS('neither receipt.ts nor iat is present');
}

/** n/2 for P-256: an ECDSA S above it is "high". */
const P256_HALF_ORDER = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551n >> 1n;

// nowMs reads the `now` option as users pass it: a clock function (returning a Date or epoch milliseconds), a
// Date, or epoch milliseconds; anything else is a TypeError naming what is wanted.
function nowMs(now) {
  const v = typeof now === 'function' ? now() : now ?? new Date();
  const ms = v instanceof Date ? v.getTime() : v;
  if (typeof ms !== 'number' || !Number.isFinite(ms)) {
    throw new TypeError('verifyReceipt: now must be a Date, epoch milliseconds, or a function returning one');
  }
  return ms;
}

function maxAgeSeconds(v) {
  if (v === undefined || v === null || v === 0) return DEFAULT_MAX_AGE_S;
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) throw new TypeError('verifyReceipt: maxAgeSeconds must be a positive number of seconds');
  return v;
}

/**
 * verifyJWS checks a compact JWS receipt; returns {payload (text), claims}. Throws ReceiptError.
 * @param {string} jws
 * @param {string|object} jwks the pinned public key set (e.g. /.well-known/payguard-keys.json, kept locally)
 * @param {{archival?: boolean, maxAgeSeconds?: number, now?: Date | number | (() => Date | number)}} [opts]
 */
export function verifyJWS(jws, jwks, opts = {}) {
  const keys = publicKeys(jwks);
  const parts = String(jws).trim().split('.');
  if (parts.length !== 3) throw new ReceiptError('malformed', `${parts.length} dot-separated parts (want 3)`);
  if (!b64urlOK(parts[0])) throw new ReceiptError('malformed', 'header is not base64url');
  let hdr;
  try {
    hdr = JSON.parse(b64url(parts[0]).toString('utf8'));
  } catch (e) {
    throw new ReceiptError('malformed', `header: ${e.message}`);
  }
  if (hdr === null || typeof hdr !== 'object' || Array.isArray(hdr)) throw new ReceiptError('malformed', 'header is not an object');
  const alg = member(hdr, 'alg'), kid = member(hdr, 'kid'), typ = member(hdr, 'typ');
  for (const v of [alg, kid, typ]) if (v !== undefined && v !== null && typeof v !== 'string') throw new ReceiptError('malformed', 'header member is not a string');
  if (alg !== 'ES256') throw new ReceiptError('algorithm', `alg is ${JSON.stringify(alg ?? '')}`);
  if (typ !== RECEIPT_TYPE) throw new ReceiptError('type', `typ is ${JSON.stringify(typ ?? '')}`);
  const key = keys.get(kid ?? '');
  if (!key) throw new ReceiptError('unknown_key', `kid ${JSON.stringify(kid ?? '')} is not in the pinned key set`);
  if (!b64urlOK(parts[1]) || !b64urlOK(parts[2])) throw new ReceiptError('malformed', 'payload or signature is not base64url');
  // One decision, one valid receipt: ECDSA's (r, n-s) twin verifies too, so only the low-S signature (what
  // payguard writes) is accepted, as receipts/verify.go does.
  const sig = b64url(parts[2]);
  if (sig.length === 64 && BigInt(`0x${sig.subarray(32).toString('hex')}`) > P256_HALF_ORDER) {
    throw new ReceiptError('signature', `high-S signature (kid ${JSON.stringify(kid)}); receipts carry the low-S one`);
  }
  let ok = false;
  try {
    ok = verify('sha256', Buffer.from(`${parts[0]}.${parts[1]}`), { key, dsaEncoding: 'ieee-p1363' }, sig);
  } catch {
    ok = false;
  }
  if (!ok) throw new ReceiptError('signature', `signature does not verify (kid ${JSON.stringify(kid)})`);
  const payload = b64url(parts[1]).toString('utf8');
  const { ms, claims } = issuedAt(payload);
  const now = nowMs(opts.now);
  if (ms > now + LEEWAY_MS) throw new ReceiptError('not_yet_valid', 'receipt is dated in the future');
  const maxAgeMs = maxAgeSeconds(opts.maxAgeSeconds) * 1000;
  if (!opts.archival && now - ms > maxAgeMs + LEEWAY_MS) throw new ReceiptError('expired', 'receipt is older than the maximum age');
  return { payload, claims: { keyId: kid, issuedAt: new Date(ms), ...claims } };
}

/**
 * verifyReceipt verifies what `payguard verify-receipt` reads: a whole PreflightResult (a JSON string or an
 * object) field by field against its signed receipt.jws, or a bare compact JWS. Returns the claims; throws
 * ReceiptError (kind field_altered names the differing field; result_invalid for a result that cannot be
 * checked).
 * @param {string|object} receipt
 * @param {string|object} jwks
 * @param {{archival?: boolean, maxAgeSeconds?: number, now?: Date | number | (() => Date | number)}} [opts]
 */
export function verifyReceipt(receipt, jwks, opts = {}) {
  const text = typeof receipt === 'string' ? receipt.trim() : JSON.stringify(receipt);
  if (!text.startsWith('{')) return verifyJWS(text, jwks, opts).claims;
  let result;
  try {
    result = parseExact(text, { rejectRepeats: true });
  } catch (e) {
    const why = e instanceof RepeatedNameError || e instanceof TrailingDataError ? e.message : `not a JSON result object: ${e.message}`;
    throw new ReceiptError('result_invalid', why);
  }
  const rcpt = result.receipt;
  const jws = rcpt && typeof rcpt === 'object' && !Array.isArray(rcpt) && !(rcpt instanceof Num) ? rcpt.jws : undefined;
  if (typeof jws !== 'string' || jws === '') throw new ReceiptError('result_invalid', 'the result has no receipt.jws');
  const { payload, claims } = verifyJWS(jws, jwks, opts);
  delete rcpt.jws;
  let signed;
  try {
    signed = parseExact(payload);
  } catch (e) {
    throw new ReceiptError('result_invalid', `signed payload is not a JSON object: ${e.message}`);
  }
  if (signed === null || typeof signed !== 'object' || Array.isArray(signed) || signed instanceof Num) {
    throw new ReceiptError('result_invalid', 'signed payload is not a JSON object');
  }
  const field = firstDifference('', result, signed);
  if (field) throw Object.assign(new ReceiptError('field_altered', `field "${field}" differs from the signed payload`), { field });
  return claims;
}
