// A Solana "exact" payment (the partially signed transaction an x402 client sends as payload.transaction),
// read and bound to the approved requirement as payguard's proxy does (x402/svm CheckExact, SPEC §11.9),
// for the v1 guard, which sees the signed payment before it leaves: compute limit, compute price within the
// facilitator's bound, one TransferChecked (Token or Token-2022, four accounts) of exactly the amount of the
// mint to payTo's associated token account, then Memo only; fee payer = extra.feePayer, named by no
// instruction; no address lookup tables. No dependency: the wire format is small, and the associated token
// account is a program-derived address (sha256 and an ed25519 curve test, done here with BigInt).

import { createHash } from 'node:crypto';

const ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
const MAX_TX = 1232; // Solana's packet size
const MAX_COMPUTE_UNIT_PRICE = 5_000_000n; // micro-lamports per compute unit (5 lamports)

/** decodeKey returns the 32 bytes of a Base58 address, or null. */
export function decodeKey(s) {
  if (typeof s !== 'string' || s === '' || s.length > 44) return null;
  let n = 0n;
  for (const c of s) {
    const d = ALPHABET.indexOf(c);
    if (d < 0) return null;
    n = n * 58n + BigInt(d);
  }
  const out = [];
  for (; n > 0n; n >>= 8n) out.unshift(Number(n & 0xffn));
  for (let i = 0; i < s.length && s[i] === '1'; i++) out.unshift(0);
  return out.length === 32 ? Buffer.from(out) : null;
}

const KEYS = Object.fromEntries(Object.entries({
  token: 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA',
  token2022: 'TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb',
  ata: 'ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL',
  computeBudget: 'ComputeBudget111111111111111111111111111111',
  memo: 'MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr',
}).map(([k, v]) => [k, decodeKey(v)]));

// ed25519: p = 2^255 - 19, d = -121665/121666.
const P = (1n << 255n) - 19n;
const mod = (a) => ((a % P) + P) % P;
function pow(b, e) {
  let r = 1n;
  for (b = mod(b); e > 0n; e >>= 1n, b = mod(b * b)) if (e & 1n) r = mod(r * b);
  return r;
}
const D = mod(-121665n * pow(121666n, P - 2n));

/** onCurve reports whether 32 bytes decode to an ed25519 point (as curve25519-dalek decompresses them). */
export function onCurve(bytes) {
  let y = 0n;
  for (let i = 31; i >= 0; i--) y = (y << 8n) | BigInt(i === 31 ? bytes[i] & 0x7f : bytes[i]);
  const y2 = mod(y * y);
  const w = mod((y2 - 1n) * pow(D * y2 + 1n, P - 2n)); // x² = (y² - 1) / (d·y² + 1)
  return w === 0n || pow(w, (P - 1n) / 2n) === 1n;
}

/** associatedTokenAddress: the PDA of [owner, token program, mint] under the ATA program (32 bytes). */
export function associatedTokenAddress(owner, mint, tokenProgram) {
  for (let bump = 255; bump >= 0; bump--) {
    const h = createHash('sha256').update(owner).update(tokenProgram).update(mint).update(Buffer.from([bump]))
      .update(KEYS.ata).update('ProgramDerivedAddress').digest();
    if (!onCurve(h)) return h;
  }
  throw new Error('no program address');
}

// reader reads the wire format; every read throws past the end.
function reader(b) {
  let off = 0;
  const take = (n) => {
    if (n < 0 || n > b.length - off) throw new Error('truncated transaction');
    const out = b.subarray(off, off + n);
    off += n;
    return out;
  };
  const u8 = () => take(1)[0];
  const cu16 = () => { // Solana's short_vec: shortest form only, at most 16 bits
    let v = 0;
    for (let i = 0; i < 3; i++) {
      const c = u8();
      if (i === 2 && c > 3) throw new Error('compact-u16 overflows');
      v |= (c & 0x7f) << (7 * i);
      if (!(c & 0x80)) {
        if (i > 0 && c === 0) throw new Error('compact-u16 not in its shortest form');
        return v;
      }
    }
    throw new Error('compact-u16 too long');
  };
  return { take, u8, cu16, rest: () => b.length - off };
}

/** decodeTransaction reads a legacy or v0 wire transaction: {keys, instructions, lookups, requiredSignatures}. */
export function decodeTransaction(bytes) {
  if (bytes.length > MAX_TX) throw new Error(`transaction larger than ${MAX_TX} bytes`);
  const r = reader(bytes);
  const nsig = r.cu16();
  r.take(64 * nsig);
  let first = r.u8();
  let version = -1;
  if (first & 0x80) {
    version = first & 0x7f;
    if (version !== 0) throw new Error(`message version ${version}`);
    first = r.u8();
  }
  const header = [first, r.u8(), r.u8()];
  const nkeys = r.cu16();
  const keys = [];
  for (let i = 0; i < nkeys; i++) keys.push(Buffer.from(r.take(32)));
  r.take(32); // blockhash
  if (header[0] !== nsig || header[0] === 0 || header[0] > nkeys || header[1] >= header[0]) throw new Error('inconsistent message header');
  const instructions = [];
  for (let n = r.cu16(), i = 0; i < n; i++) {
    const program = r.u8();
    const accounts = [...r.take(r.cu16())];
    const data = Buffer.from(r.take(r.cu16()));
    if (program >= nkeys || program === 0) throw new Error('bad program index');
    instructions.push({ program: keys[program], accounts, data });
  }
  const lookups = version === 0 ? r.cu16() : 0;
  for (let i = 0; i < lookups; i++) { r.take(32); r.take(r.cu16()); r.take(r.cu16()); }
  if (r.rest() !== 0) throw new Error('bytes after the message');
  return { keys, instructions, lookups, requiredSignatures: header[0] };
}

/**
 * svmPaysExactly reports whether a base64 transaction pays exactly the requirement (v1: maxAmountRequired;
 * v2: amount) and nothing else, with the requirement's fee payer.
 */
export function svmPaysExactly(transaction, req) {
  try {
    if (typeof transaction !== 'string' || !/^[A-Za-z0-9+/]*={0,2}$/.test(transaction)) return false;
    const tx = decodeTransaction(Buffer.from(transaction, 'base64'));
    const payTo = decodeKey(req.payTo), mint = decodeKey(req.asset), feePayer = decodeKey(req.extra?.feePayer);
    const amountText = String(req.maxAmountRequired ?? req.amount);
    if (!payTo || !mint || !feePayer || !/^\d+$/.test(amountText) || tx.lookups !== 0) return false;
    if (!tx.keys[0].equals(feePayer) || tx.instructions.length < 3 || tx.instructions.length > 7) return false;
    if (tx.instructions.some((ix) => ix.accounts.includes(0) || ix.accounts.some((a) => a >= tx.keys.length))) return false;
    const [limit, price, transfer, ...rest] = tx.instructions;
    const budget = (ix, disc, size) => ix.program.equals(KEYS.computeBudget) && ix.data.length === size && ix.data[0] === disc && ix.accounts.length === 0;
    if (!budget(limit, 2, 5) || !budget(price, 3, 9) || price.data.readBigUInt64LE(1) > MAX_COMPUTE_UNIT_PRICE) return false;
    const program = transfer.program;
    if (!program.equals(KEYS.token) && !program.equals(KEYS.token2022)) return false;
    if (transfer.data.length !== 10 || transfer.data[0] !== 12 || transfer.accounts.length !== 4) return false;
    const [, m, dest, authority] = transfer.accounts;
    if (authority >= tx.requiredSignatures || !tx.keys[m].equals(mint)) return false;
    if (!tx.keys[dest].equals(associatedTokenAddress(payTo, mint, program))) return false;
    if (transfer.data.readBigUInt64LE(1) !== BigInt(amountText)) return false;
    const memo = typeof req.extra?.memo === 'string' && req.extra.memo !== '' ? req.extra.memo : null;
    if (!rest.every((ix) => ix.program.equals(KEYS.memo))) return false;
    return memo === null || (rest.length === 1 && rest[0].data.toString('utf8') === memo);
  } catch {
    return false;
  }
}
