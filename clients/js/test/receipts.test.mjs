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
