// Every decision vector the Go engine exported (testdata/vectors/decisions.json) must be decided the same
// here: decision, reasons (text and order), chosen option and amount.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { decideChallenge } from '../src/decide.js';
import { camelRuleName, normalizeRules } from '../src/rules.js';
import { parseUSD } from '../src/usd.js';

const file = JSON.parse(readFileSync(new URL('../../../testdata/vectors/decisions.json', import.meta.url)));

/** The fake screener of the Go test (preflight/vectors_test.go), answering from the vector's facts. */
function screenerFor(s, accepts) {
  return () => {
    const sanctions = {
      unavailable: { state: 'unavailable' },
      failed: { state: 'failed' },
      clear: { state: 'screened' },
      listed: { state: 'screened', addressMatch: true },
    }[s.sanctions];
    const given = s.domain_age_days !== undefined || s.domain_has_a !== undefined || s.domain_failed;
    const domain = !given ? {} : s.domain_failed ? { failed: true } : { ageDays: s.domain_age_days, hasA: s.domain_has_a };
    return { sanctions, domain };
  };
}

test('at least 100 vectors', () => assert.ok(file.vectors.length >= 100, `${file.vectors.length}`));

for (const v of file.vectors) {
  test(`vector: ${v.name}`, () => {
    const input = v.input;
    const rules = normalizeRules(Object.fromEntries(Object.entries(input.rules ?? {}).map(([k, val]) => [camelRuleName(k), val])));
    const got = decideChallenge({
      paymentRequired: input.challenge,
      accepts: input.challenge.accepts,
      rules,
      spentToday: input.context ? parseUSD(input.context.spent_today_usd) : 0n,
      resourceUrl: input.resource_url,
      screen: screenerFor(v.screening, input.challenge.accepts),
    });
    assert.deepEqual(
      { decision: got.decision, reasons: got.reasons, chosen: got.chosen, amount_micros: Number(got.amountMicros) },
      { decision: v.expect.decision, reasons: v.expect.reasons, chosen: v.expect.chosen, amount_micros: v.expect.amount_micros },
    );
  });
}
