// The `upto` scheme through payguard proxy, with real peers: @x402/evm 2.27's upto client (@x402/fetch) paying
// an @x402/express seller with upto routes (@x402/evm's UptoEvmScheme server, usage reported through
// setSettlementOverrides), settled by the local facilitator, which checks the Permit2 witness signature,
// recipient, facilitator, window, amounts and nonce.
//
// What each test proves is counted where the money would move: the facilitator's /_stats (verified and
// settled, with the settled amount), the seller's /stats, and payguard's own budget and metrics.

import { describe, it, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startFacilitator } from '../lib/facilitator.mjs';
import { startSellerUpto } from '../lib/seller-upto.mjs';
import { buy } from '../lib/buyer.mjs';
import { makeTestPKI } from '../lib/tls.mjs';
import { newSellerStats } from '../lib/seller-common.mjs';
import { adminClient, startProxy } from '../lib/payguard.mjs';

const TOKEN = 'interop-admin-token-0123456789abcdef';
const SANCTIONS_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'testdata', 'ofac');
const GUARD_ARGS = ['--offline', '--sanctions-dir', SANCTIONS_DIR];
const RULES = { max_per_payment_usd: 1, hold_above_usd: 0.25, daily_cap_usd: 25 };

let tmp;
let pki;
let fac;
let plain; // the upto seller over HTTP
let tls; // the same over HTTPS (MITM'd by payguard)

before(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'interop-upto-'));
  pki = makeTestPKI(path.join(tmp, 'upstream-pki'));
  fac = await startFacilitator();
  [plain, tls] = await Promise.all([
    startSellerUpto({ facilitatorUrl: fac.url, network: 'base' }),
    startSellerUpto({ facilitatorUrl: fac.url, network: 'base', tls: pki }),
  ]);
});

after(async () => {
  await Promise.all([fac?.close(), plain?.close(), tls?.close()]);
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

const facStats = async () => (await fetch(`${fac.url}/_stats`)).json();
const reset = async () => {
  await fetch(`${fac.url}/_reset`, { method: 'POST' });
  for (const s of [plain, tls]) Object.assign(s.stats(), newSellerStats());
};

async function metrics(g) {
  return (await fetch(`${g.adminUrl}/metrics`)).text();
}

async function startGuard(name) {
  return startProxy({ dir: path.join(tmp, name), token: TOKEN, upstreamCAFiles: [pki.caFile], rules: RULES, holdWait: '0s', args: GUARD_ARGS });
}

describe('upto through payguard proxy', () => {
  let guard;
  before(async () => { guard = await startGuard('guard-upto'); });
  after(async () => { await guard?.stop(); });
  beforeEach(reset);

  for (const [name, seller] of [['HTTP', () => plain], ['HTTPS (MITM)', () => tls]]) {
    it(`under the cap, ${name}: paid, and the spend is the settled amount, not the maximum`, async () => {
      const admin = adminClient(guard.adminUrl, TOKEN);
      const before = (await admin.budget()).json;
      const r = await buy(`${seller().url}/metered?usage=70000`, { proxy: guard.proxyUrl, ca: guard.caPem, upto: true });
      assert.equal(r.error, null, r.error);
      assert.equal(r.status, 200, `${r.status} ${r.body}`);
      assert.deepEqual(r.exchanges.map((e) => e.status), [402, 200]);
      assert.equal(r.paymentHeader.payload.accepted.scheme, 'upto');
      assert.equal(r.paymentHeader.payload.payload.permit2Authorization.permitted.amount, '200000');
      assert.equal(r.paymentResponse.amount, '70000');
      assert.equal(r.headers['x-payguard-decision'], 'allow');
      assert.equal(r.headers['x-payguard-scheme'], 'upto');
      assert.equal(r.headers['x-payguard-authorized'], '200000');
      assert.equal(r.headers['x-payguard-settled'], '70000');
      const s = await facStats();
      assert.equal(s.settle.success, 1);
      assert.deepEqual(s.settled.map((x) => [x.scheme, x.maximum, x.amount]), [['upto', '200000', '70000']]);
      const after = (await admin.budget()).json;
      assert.equal(after.spent_micros - before.spent_micros, 70000, 'the spend is what was settled');
      assert.equal(after.reserved_micros, before.reserved_micros, 'the rest of the reserved maximum is released');
      const m = await metrics(guard);
      assert.match(m, /payguard_payments_released_total\{scheme="upto",via="ticket"\} [1-9]/);
      assert.match(m, /payguard_settlements_total\{result="success",scheme="upto"\} [1-9]/);
    });
  }

  it('a settlement of zero: nothing is spent, the whole maximum is released', async () => {
    const admin = adminClient(guard.adminUrl, TOKEN);
    const before = (await admin.budget()).json;
    const r = await buy(`${plain.url}/metered?usage=0`, { proxy: guard.proxyUrl, ca: guard.caPem, upto: true });
    assert.equal(r.status, 200, r.body);
    assert.equal(r.paymentResponse.amount, '0');
    assert.equal(r.headers['x-payguard-settled'], '0');
    const after = (await admin.budget()).json;
    assert.equal(after.spent_micros, before.spent_micros);
    assert.equal(after.reserved_micros, before.reserved_micros);
  });

  it('a maximum over the cap is refused before the agent can sign, and nothing reaches the seller', async () => {
    const r = await buy(`${plain.url}/metered-pricey`, { proxy: guard.proxyUrl, ca: guard.caPem, upto: true });
    // The client never got terms it could sign: payguard answered the 402 with its refusal.
    assert.equal(r.status, 403, `${r.status} ${r.body} ${r.error}`);
    assert.equal(r.paymentHeader, null);
    assert.equal(r.json.decision, 'block');
    assert.deepEqual(r.json.reasons, ['block: upto maximum $5 exceeds max $1']);
    assert.equal(plain.stats().paymentHeaders, 0);
    const s = await facStats();
    assert.equal(s.verify.calls + s.settle.calls, 0);
  });
});

describe('a settlement above the authorized maximum raises an alarm', () => {
  let guard;
  before(async () => { guard = await startGuard('guard-alarm'); });
  after(async () => { await guard?.stop(); });
  beforeEach(reset);

  it('forged by the facilitator: alarm logged and counted, the maximum spent, the seller held after', async () => {
    const admin = adminClient(guard.adminUrl, TOKEN);
    await fetch(`${fac.url}/_forge`, { method: 'POST', body: JSON.stringify({ uptoAmount: '900000' }) });
    const r = await buy(`${plain.url}/metered?usage=70000`, { proxy: guard.proxyUrl, ca: guard.caPem, upto: true });
    assert.equal(r.status, 200, r.body);
    assert.equal(r.paymentResponse.amount, '900000', 'the seller passed on the forged settlement');
    assert.equal(r.headers['x-payguard-settled'], undefined, 'payguard does not vouch for it');
    const b = (await admin.budget()).json;
    assert.equal(b.spent_micros, 200000, 'the whole authorized maximum counts, never the forged figure');
    assert.equal(b.reserved_micros, 0);
    assert.match(await metrics(guard), /payguard_settlement_alarms_total\{scheme="upto"\} 1/);
    const alarmLine = guard.output().split('\n').find((l) => l.includes('"msg":"settlement alarm"'));
    assert.ok(alarmLine, 'an error line says what happened');
    assert.equal(JSON.parse(alarmLine).level, 'ERROR');
    const alarms = (await admin.raw('GET', '/v1/alarms')).json.alarms;
    assert.equal(alarms.length, 1);
    assert.match(alarms[0].what, /settled 900000 above the authorized maximum 200000/);

    // The seller's next payment waits for a person, and says why.
    const next = await buy(`${plain.url}/metered?usage=1000`, { proxy: guard.proxyUrl, ca: guard.caPem, upto: true });
    assert.equal(next.status, 403);
    assert.equal(next.json.decision, 'hold');
    assert.match(next.json.reasons.join(' '), /^hold: seller 127\.0\.0\.1 reported a settlement outside its authorization/);
    assert.equal(plain.stats().paymentHeaders, 1, 'only the first payment reached the seller');

    // An operator clears it: the seller is decided by the rules again.
    assert.equal((await admin.raw('DELETE', '/v1/alarms/127.0.0.1')).status, 200);
    const again = await buy(`${plain.url}/metered?usage=1000`, { proxy: guard.proxyUrl, ca: guard.caPem, upto: true });
    assert.equal(again.status, 200, again.body);
    assert.equal(again.headers['x-payguard-settled'], '1000');
  });
});
