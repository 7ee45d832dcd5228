// The v1 guard's Solana payment check (src/svm.js) against what the official @x402/svm client sends
// (x402/svm/svmtest/official.json, the fixtures payguard's Go reader is tested with) and ATAs derived with
// @solana/kit: an official payment passes for its own requirement and for no other.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { associatedTokenAddress, decodeKey, onCurve, svmPaysExactly } from '../src/svm.js';

const official = JSON.parse(fs.readFileSync(new URL('../../../x402/svm/svmtest/official.json', import.meta.url), 'utf8'));
const b58 = (bytes) => {
  const A = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
  let n = BigInt(`0x${Buffer.from(bytes).toString('hex')}`);
  let s = '';
  for (; n > 0n; n /= 58n) s = A[Number(n % 58n)] + s;
  for (const b of bytes) { if (b !== 0) break; s = `1${s}`; }
  return s;
};

test('ATAs agree with @solana/kit', () => {
  assert.ok(official.atas.length >= 16);
  for (const v of official.atas) {
    const got = b58(associatedTokenAddress(decodeKey(v.owner), decodeKey(v.mint), decodeKey(v.program)));
    assert.equal(got, v.ata, `${v.owner} ${v.mint} ${v.program}`);
  }
  // A real key is on the curve; the ATAs are not (that is what makes them program addresses).
  assert.equal(onCurve(decodeKey(official.payments[0].want.payer)), true);
  assert.equal(onCurve(decodeKey(official.atas[0].ata)), false);
});

test('official payments pass for their own requirement', () => {
  for (const p of official.payments) assert.equal(svmPaysExactly(p.transaction, p.requirement), true, p.name);
});

test('an official payment does not pass for other terms, or changed', () => {
  const p = official.payments[0]; // devnet USDC, 10000, no memo
  const r = p.requirement;
  const other = official.payments[3].requirement.asset; // another mint
  for (const [name, req] of [
    ['another amount', { ...r, amount: '10001' }],
    ['another payTo', { ...r, payTo: p.want.payer }],
    ['another mint', { ...r, asset: other }],
    ['another fee payer', { ...r, extra: { feePayer: p.want.payer } }],
    ['no fee payer', { ...r, extra: {} }],
    ['a memo it does not carry', { ...r, extra: { ...r.extra, memo: 'invoice-1' } }],
  ]) assert.equal(svmPaysExactly(p.transaction, req), false, name);
  const raw = Buffer.from(p.transaction, 'base64');
  const amountAt = raw.indexOf(Buffer.from([12, 0x10, 0x27, 0, 0, 0, 0, 0, 0])); // TransferChecked, 10000
  assert.ok(amountAt > 0);
  const more = Buffer.from(raw);
  more[amountAt + 1] = 0x11; // 10001
  assert.equal(svmPaysExactly(more.toString('base64'), r), false, 'changed amount');
  for (const bad of ['', 'not base64!', raw.subarray(0, raw.length - 1).toString('base64'), Buffer.concat([raw, Buffer.from([0])]).toString('base64')]) {
    assert.equal(svmPaysExactly(bad, r), false, JSON.stringify(bad.slice(0, 20)));
  }
});
