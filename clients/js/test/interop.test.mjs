// Real peers: the official npm buyer (@x402/fetch around an @x402/core client; x402-fetch for v1) wrapped in
// the guard pays the official npm sellers (@x402/express, x402-express) through the interop harness's local
// facilitator; remote screening and receipts come from the real `payguard serve`. The harness lives in
// interop/lib (its packages in interop/node_modules).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { wrapFetchWithPayment, x402Client, x402HTTPClient } from '@x402/fetch';
import { registerExactEvmScheme } from '@x402/evm/exact/client';
import { wrapFetchWithPayment as wrapFetchV1 } from 'x402-fetch';
import { createWalletClient, http as viemHttp } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { base } from 'viem/chains';
import { startFacilitator } from '../../../interop/lib/facilitator.mjs';
import { startSellerV2 } from '../../../interop/lib/seller-v2.mjs';
import { startSellerV1 } from '../../../interop/lib/seller-v1.mjs';
import { adminClient, startProxy, startServe } from '../../../interop/lib/payguard.mjs';
import { BUYER_KEY, SELLER_PAY_TO } from '../../../interop/lib/wallets.mjs';
import { PaymentRefusedError, createGuard, guardV1Fetch, verifyJWS, verifyReceipt } from '../src/index.js';

const LOCAL = { screenSanctions: false }; // no sanctions list in process: acknowledged explicitly
const SERVICE_PAY_TO = '0x90F79bf6EB2c4f870365E785982E1f101E93b906';
const SANCTIONS_DIR = new URL('../../../interop/testdata/ofac', import.meta.url).pathname;
let fac, v2, v1, tmp;

before(async () => {
  fac = await startFacilitator();
  v2 = await startSellerV2({ facilitatorUrl: fac.url });
  v1 = await startSellerV1({ facilitatorUrl: fac.url });
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'payguard-js-'));
});
after(async () => {
  await v2?.close();
  await v1?.close();
  await fac?.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

const facStats = async () => (await fetch(`${fac.url}/_stats`)).json();
const reset = async () => { await fetch(`${fac.url}/_reset`, { method: 'POST' }); };

/** buyer is the official v2 buyer: x402Client + the EVM scheme, the SDK's own $1 cap off, wrapped in the guard. */
function buyer(options) {
  const client = new x402Client().setSpendControls(false);
  registerExactEvmScheme(client, { signer: privateKeyToAccount(BUYER_KEY) });
  const g = createGuard(options);
  const http = g.attach(new x402HTTPClient(client)); // the HTTP client carries the request URL to the guard
  return { pay: wrapFetchWithPayment(fetch, http), guard: g };
}

test('v2: an allowed payment settles', async () => {
  await reset();
  const { pay, guard } = buyer({ rules: LOCAL });
  const res = await pay(`${v2.url}/cheap`);
  assert.equal(res.status, 200);
  const s = await facStats();
  assert.equal(s.settle.success, 1);
  assert.equal(s.settled[0].payTo.toLowerCase(), SELLER_PAY_TO.toLowerCase());
  assert.equal(String(s.settled[0].amount), '10000');
  assert.equal(guard.spent().spentUsd, '0.01');
});

test('v2: a payment over the cap is refused before signing; the facilitator sees nothing', async () => {
  await reset();
  const before = v2.stats().paymentHeaders;
  const { pay } = buyer({ rules: LOCAL });
  await assert.rejects(pay(`${v2.url}/pricey`), /payguard: block: amount \$5 exceeds max \$1/);
  const s = await facStats();
  assert.equal(s.verify.calls + s.settle.calls, 0);
  assert.equal(v2.stats().paymentHeaders, before);
});

test('v2: 20 concurrent payments against a $0.05 cap at $0.01 settle exactly 5', async () => {
  await reset();
  const { pay, guard } = buyer({ rules: { ...LOCAL, dailyCapUsd: 0.05 } });
  const results = await Promise.allSettled(Array.from({ length: 20 }, () => pay(`${v2.url}/cheap`)));
  const paid = results.filter((r) => r.status === 'fulfilled' && r.value.status === 200);
  const refused = results.filter((r) => r.status === 'rejected' && /daily cap \$0.05 would be exceeded/.test(r.reason.message));
  assert.equal(paid.length, 5);
  assert.equal(refused.length, 15);
  assert.equal((await facStats()).settle.success, 5);
  assert.equal(guard.spent().spentUsd, '0.05');
});

test('v2: a hold with onHold returning false refuses; true pays', async () => {
  await reset();
  const asked = [];
  const refused = buyer({ rules: LOCAL, onHold: (h) => { asked.push(h); return false; } });
  await assert.rejects(refused.pay(`${v2.url}/mid`), /hold: amount \$0.5 above hold threshold \$0.25/);
  assert.equal(asked.length, 1);
  assert.equal(asked[0].requirements.payTo, SELLER_PAY_TO);
  assert.equal((await facStats()).verify.calls, 0);
  const approved = buyer({ rules: LOCAL, onHold: () => true });
  assert.equal((await approved.pay(`${v2.url}/mid`)).status, 200);
  assert.equal((await facStats()).settle.success, 1);
});

test('v1: x402-fetch through guardV1Fetch: allowed settles, over the cap refused before signing', async () => {
  await reset();
  const wallet = createWalletClient({ chain: base, transport: viemHttp('http://127.0.0.1:9/no-rpc'), account: privateKeyToAccount(BUYER_KEY) });
  const g = createGuard({ rules: LOCAL });
  const pay = wrapFetchV1(guardV1Fetch(fetch, g), wallet, 10_000_000n);
  assert.equal((await pay(`${v1.url}/cheap`)).status, 200);
  const refused = await pay(`${v1.url}/pricey`);
  assert.equal(refused.status, 403);
  assert.deepEqual((await refused.json()).reasons, ['block: amount $5 exceeds max $1']);
  const s = await facStats();
  assert.equal(s.settle.success, 1);
  assert.equal(s.verify.calls, 1);
  assert.equal(g.spent().spentUsd, '0.01');
});

test('payguard serve: remote screening blocks a sanctioned payee, and its receipt verifies offline', async (t) => {
  await reset();
  const api = await startServe({
    dir: path.join(tmp, 'serve'), payTo: SERVICE_PAY_TO, facilitatorUrl: fac.url,
    args: ['--offline', '--sanctions-dir', SANCTIONS_DIR],
  });
  t.after(() => api.stop());
  const jwks = await (await fetch(`${api.url}/.well-known/payguard-keys.json`)).text();

  // Remote screening (the free trial, plain fetch) of the seller's offer: allowed, and settled.
  const { pay } = buyer({ remote: true, remoteUrl: api.url });
  assert.equal((await pay(`${v2.url}/cheap`)).status, 200);

  // A seller whose payTo is on the OFAC excerpt: the service blocks it, nothing is signed.
  const sanctioned = await startSellerV2({ facilitatorUrl: fac.url, payTo: '0x098B716B8Aaf21512996dC57EB0615e2383E2f96' });
  t.after(() => sanctioned.close());
  const err = await pay(`${sanctioned.url}/cheap`).then(() => null, (e) => e);
  assert.ok(err instanceof PaymentRefusedError, String(err));
  assert.equal(err.decision, 'block');
  assert.match(err.reasons.join(' '), /OFAC SDN-listed address/);
  // The refusal carries the service's signed receipt, which verifies offline against the pinned keys.
  assert.equal(verifyJWS(err.receipt.jws, jwks).claims.decision, 'block');
  assert.equal((await facStats()).settle.success, 1);

  // A receipt from payguard serve verifies in JS; altered, it does not.
  const ch = await fetch(`${v2.url}/cheap`);
  const challenge = JSON.parse(Buffer.from(ch.headers.get('payment-required'), 'base64').toString());
  const res = await fetch(`${api.url}/v1/preflight?trial=1`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ challenge, rules: { screen_sanctions: false } }),
  });
  const text = await res.text();
  assert.equal(res.status, 200, text);
  const claims = verifyReceipt(text, jwks);
  assert.equal(claims.decision, JSON.parse(text).decision);
  assert.throws(() => verifyReceipt(text.replace('"options_evaluated":1', '"options_evaluated":2'), jwks), /field_altered/);
  fs.writeFileSync(path.join(tmp, 'serve-result.json'), text);
});

test('sidecar: two guarded agents share the sidecar proxy\'s ledger', async (t) => {
  await reset();
  const token = 'guard-test-token-0123456789abcdef';
  const sidecar = await startProxy({
    dir: path.join(tmp, 'sidecar'), token, rules: { daily_cap_usd: 0.05, hold_above_usd: 0.02 },
    args: ['--offline', '--sanctions-dir', SANCTIONS_DIR],
  });
  t.after(() => sidecar.stop());
  const opts = { sidecar: { url: sidecar.adminUrl, token } };
  const a = buyer(opts), b = buyer(opts);
  const results = await Promise.allSettled(Array.from({ length: 10 }, (_, i) => (i % 2 ? a : b).pay(`${v2.url}/cheap`)));
  assert.equal(results.filter((r) => r.status === 'fulfilled' && r.value.status === 200).length, 5);
  assert.equal(results.filter((r) => r.status === 'rejected' && /daily cap \$0.05 would be exceeded/.test(r.reason.message)).length, 5);
  assert.equal((await facStats()).settle.success, 5);
  const budget = await (await fetch(`${sidecar.adminUrl}/v1/budget`, { headers: { authorization: `Bearer ${token}` } })).json();
  assert.equal(budget.spent_micros + budget.reserved_micros, 50000);
  assert.equal(a.guard.spent().spentUsd, '0'); // the budget is the sidecar's, not the process's

});

test('sidecar: a hold waits in the sidecar\'s approval queue; onHold false pays nothing, true approves it there', async (t) => {
  await reset();
  const token = 'guard-test-token-0123456789abcdef';
  const sidecar = await startProxy({
    dir: path.join(tmp, 'sidecar-holds'), token, rules: { daily_cap_usd: 1, hold_above_usd: 0.02 },
    args: ['--offline', '--sanctions-dir', SANCTIONS_DIR],
  });
  t.after(() => sidecar.stop());
  const auth = { headers: { authorization: `Bearer ${token}` } };
  const opts = { sidecar: { url: sidecar.adminUrl, token } };
  const refused = buyer({ ...opts, onHold: () => false });
  await assert.rejects(refused.pay(`${v2.url}/mid`), /payguard: hold: amount \$0.5 above hold threshold \$0.02/);
  const pending = await (await fetch(`${sidecar.adminUrl}/v1/holds?status=pending`, auth)).json();
  assert.equal(pending.holds.length, 1, JSON.stringify(pending));
  assert.equal((await facStats()).verify.calls, 0);

  const approved = buyer({ ...opts, onHold: () => true });
  assert.equal((await approved.pay(`${v2.url}/mid`)).status, 200);
  assert.equal((await facStats()).settle.success, 1);
  const budget = await (await fetch(`${sidecar.adminUrl}/v1/budget`, auth)).json();
  assert.equal(budget.spent_micros + budget.reserved_micros, 500000);
  const used = await (await fetch(`${sidecar.adminUrl}/v1/holds?status=used`, auth)).json();
  assert.equal(used.holds.length, 1, JSON.stringify(used));
});

test('sidecar: the decide-only token decides but cannot approve; a person approves with the admin token', async (t) => {
  await reset();
  const token = 'guard-test-token-0123456789abcdef';
  const decideToken = 'guard-decide-only-0123456789abcdef';
  const sidecar = await startProxy({
    dir: path.join(tmp, 'sidecar-decide-only'), token, rules: { daily_cap_usd: 1, hold_above_usd: 0.02 },
    args: ['--offline', '--sanctions-dir', SANCTIONS_DIR], env: { PAYGUARD_DECIDE_TOKEN: decideToken },
  });
  t.after(() => sidecar.stop());
  const auth = { headers: { authorization: `Bearer ${token}` } };
  // The agent approves its own hold: refused by the sidecar (401), so nothing is paid.
  const agent = buyer({ sidecar: { url: sidecar.adminUrl, token: decideToken }, onHold: () => true });
  await assert.rejects(agent.pay(`${v2.url}/mid`), (e) => e instanceof PaymentRefusedError && /approve answered 401/.test(e.message));
  assert.equal((await facStats()).verify.calls, 0);
  const pending = await (await fetch(`${sidecar.adminUrl}/v1/holds?status=pending`, auth)).json();
  assert.equal(pending.holds.length, 1, JSON.stringify(pending));
  assert.equal(pending.holds[0].amount_micros, 500000); // the hold shows the amount a person approves
  assert.equal(pending.holds[0].url, `${v2.url}/mid`); // the URL the agent requested
  // A person approves with the admin token; the agent's next try is allowed once and paid.
  const res = await fetch(`${sidecar.adminUrl}/v1/holds/${pending.holds[0].id}/approve`, {
    method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: '{"by":"alice"}',
  });
  assert.equal(res.status, 200);
  assert.equal((await agent.pay(`${v2.url}/mid`)).status, 200);
  assert.equal((await facStats()).settle.success, 1);
});
