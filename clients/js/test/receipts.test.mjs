// Every receipt case the Go verifier judged (testdata/vectors/receipts.json) must be judged the same here.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { ReceiptError, verifyReceipt } from '../src/receipt.js';

const file = JSON.parse(readFileSync(new URL('../../../testdata/vectors/receipts.json', import.meta.url)));

for (const c of file.cases) {
  test(`receipt: ${c.name}`, () => {
    let kind = '';
    try {
      verifyReceipt(c.input, c.jwks ?? file.jwks, {
        archival: c.archival, maxAgeSeconds: c.max_age_seconds, now: () => new Date(c.now),
      });
    } catch (e) {
      if (!(e instanceof ReceiptError)) throw e;
      kind = e.kind;
    }
    assert.equal(kind, c.error);
  });
}

// The options as users pass them: now as a clock, a Date or epoch milliseconds; maxAgeSeconds a number. The
// same case is judged the same whichever form is given; a wrong form is a TypeError saying what is wanted.
test('receipt options: now as a function, a Date or a number; bad forms say what they want', () => {
  const fresh = file.cases.find((c) => c.name === 'jws ten minutes old');
  const old = file.cases.find((c) => c.name === 'custom max age exceeded');
  const at = new Date(fresh.now);
  for (const now of [() => at, at, at.getTime(), () => at.getTime()]) {
    assert.ok(verifyReceipt(fresh.input, file.jwks, { now }).issuedAt instanceof Date);
    assert.throws(() => verifyReceipt(old.input, file.jwks, { now, maxAgeSeconds: 60 }), (e) => e.kind === 'expired');
  }
  assert.throws(() => verifyReceipt(fresh.input, file.jwks, { now: '2026-11-22' }), /now must be a Date, epoch milliseconds/);
  assert.throws(() => verifyReceipt(fresh.input, file.jwks, { now: at, maxAgeSeconds: '60' }), /maxAgeSeconds must be a positive number/);
});
