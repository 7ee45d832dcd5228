// The guard vectors (testdata/vectors/guard.json, exported by the Go engine's TestGuardVectors): each sequence
// is one guard on the official @x402/core client (its selection, policy and hooks, real signatures) meeting
// challenges in order, each from the URL the agent requested. The option signed, the decision, its reasons and
// amount, and the budget after each step must be the engine's.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { PaymentRefusedError, createGuard } from '../src/index.js';
import { camelRuleName } from '../src/rules.js';
import { parseUSD } from '../src/usd.js';
import { sameAddress } from '../src/x402.js';
import { countingClient, payVia } from './helpers.mjs';

const file = JSON.parse(readFileSync(new URL('../../../testdata/vectors/guard.json', import.meta.url)));

/** signedIndex finds the option a payload pays among the challenge's accepts. */
function signedIndex(ch, payload) {
  if (payload.x402Version === 1) {
    const auth = payload.payload.authorization;
    return ch.accepts.findIndex((a) => a.network === payload.network && sameAddress(a.payTo, auth.to) && a.maxAmountRequired === String(auth.value));
  }
  const got = payload.accepted;
  return ch.accepts.findIndex((a) => a.network === got.network && sameAddress(a.payTo, got.payTo) && a.amount === got.amount && sameAddress(a.asset, got.asset));
}

test('the guard vectors cover at least eight sequences', () => assert.ok(file.sequences.length >= 8));

for (const seq of file.sequences) {
  test(`guard vector: ${seq.name}`, async () => {
    const rules = Object.fromEntries(Object.entries(seq.rules).map(([k, v]) => [camelRuleName(k), v]));
    let approve = false;
    let last;
    const g = createGuard({ rules, onHold: () => approve, onDecision: (e) => { last = e; } });
    const { http, signer } = countingClient();
    g.attach(http);
    for (const step of seq.steps) {
      approve = step.approve;
      last = undefined;
      const ch = structuredClone(step.challenge);
      const signsBefore = signer.signs;
      let payload, refused;
      try {
        payload = await payVia(http, ch, step.url);
      } catch (e) {
        assert.ok(e instanceof PaymentRefusedError, `${step.name}: ${e}`);
        refused = e;
      }
      const want = step.expect;
      const where = `${seq.name} / ${step.name}`;
      assert.deepEqual({ decision: last?.decision, reasons: last?.reasons, amountMicros: last?.amountMicros },
        { decision: want.decision, reasons: want.reasons, amountMicros: want.amount_micros }, where);
      assert.equal(payload !== undefined, want.paid, where);
      assert.equal(signer.signs - signsBefore, want.paid ? 1 : 0, where);
      if (want.paid) assert.equal(signedIndex(ch, payload), want.selected, `${where}: the option signed`);
      else assert.equal(refused.decision, want.decision, where);
      assert.equal(parseUSD(g.spent().spentUsd), BigInt(want.spent_after_micros), `${where}: budget after`);
    }
  });
}
