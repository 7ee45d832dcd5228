// payguard serve with real peers: the official x402 buyers (@x402/fetch for v2, x402-fetch for v1) pay
// /v1/check and /v1/preflight through the local facilitator (Base Sepolia USDC) and get 200 with the
// settlement header; a bad request is 400 and the facilitator sees nothing; a facilitator outage is 503 and
// nothing is settled; the free trial's fourth call is 402.

import { describe, it, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startFacilitator } from '../lib/facilitator.mjs';
import { buy, send } from '../lib/buyer.mjs';
import { startPayguard, freePort } from '../lib/payguard.mjs';
import { SELLER_PAY_TO } from '../lib/wallets.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const SANCTIONS_DIR = fs.existsSync(path.join(HERE, '..', 'testdata', 'ofac'))
  ? path.join(HERE, '..', 'testdata', 'ofac')
  : path.join(HERE, '..', '..', 'cmd', 'payguard', 'testdata', 'check-sanctions');

const PREFLIGHT_INPUT = JSON.stringify({
  challenge: {
    x402Version: 2,
    resource: { url: 'https://api.example.com/data' },
    accepts: [{ scheme: 'exact', network: 'eip155:8453', amount: '10000', asset: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
      payTo: '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC', maxTimeoutSeconds: 60, extra: { name: 'USD Coin', version: '2' } }],
  },
});

let fac;
let pg;
let base;
let tmp;

const stats = async () => (await fetch(`${fac.url}/_stats`)).json();

before(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'interop-serve-'));
  fac = await startFacilitator();
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  const yaml = [
    'server:',
    `  listen: 127.0.0.1:${port}`,
    `  base_url: ${base}`,
    '  contact: mailto:security@example.com', // required since the operator's contact has no default
    '  fees:',
    '    network: eip155:84532',
    `    pay_to: "${SELLER_PAY_TO}"`,
    `    facilitator_url: ${fac.url}`,
    'store:',
    '  driver: bolt',
    `  path: ${JSON.stringify(path.join(tmp, 'payguard.db'))}`,
    'keys:',
    `  receipt_key_file: ${JSON.stringify(path.join(tmp, 'receipt-keys.json'))}`,
    '',
  ].join('\n');
  pg = await startPayguard({ mode: 'serve', yaml, dir: tmp, waitFor: [`127.0.0.1:${port}`],
    args: ['--offline', '--sanctions-dir', SANCTIONS_DIR] });
});

after(async () => {
  await pg?.stop();
  await fac?.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

beforeEach(async () => {
  await fetch(`${fac.url}/_reset`, { method: 'POST' });
  await fetch(`${fac.url}/_outage`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"on":false}' });
});

describe('payguard serve with the official x402 buyers', () => {
  for (const version of [2, 1]) {
    it(`v${version} buyer pays /v1/check and gets 200 with the settlement header`, async () => {
      const r = await buy(`${base}/v1/check?name=Acme%20Widgets`, { version, network: 'base-sepolia' });
      assert.equal(r.status, 200, `${r.error ?? ''} ${r.body}`);
      assert.equal(r.paymentResponse?.success, true);
      assert.equal(r.json.risk, 'low');
      assert.ok(r.json.data_as_of);
      const s = await stats();
      assert.equal(s.settle.success, 1);
      assert.equal(s.settled[0].amount, '10000');
    });

    it(`v${version} buyer pays /v1/preflight and gets a signed decision`, async () => {
      const r = await buy(`${base}/v1/preflight`, { version, network: 'base-sepolia', method: 'POST',
        headers: { 'content-type': 'application/json' }, body: PREFLIGHT_INPUT });
      assert.equal(r.status, 200, `${r.error ?? ''} ${r.body}`);
      assert.equal(r.paymentResponse?.success, true);
      assert.equal(r.json.decision, 'allow', JSON.stringify(r.json.reasons));
      assert.match(r.json.receipt.jws, /^[\w-]+\.[\w-]+\.[\w-]+$/);
      if (version === 2) {
        const receipt = r.paymentResponse.extensions?.['offer-receipt']?.info?.receipt;
        assert.equal(receipt?.format, 'jws');
      }
      assert.equal((await stats()).settle.success, 1);
    });
  }

  it('a bad request is 400 and the facilitator sees nothing', async () => {
    const r = await buy(`${base}/v1/check`, { version: 2, network: 'base-sepolia' });
    assert.equal(r.status, 400);
    assert.equal(r.json.error.code, 'missing_input');
    const bad = await buy(`${base}/v1/preflight`, { version: 2, network: 'base-sepolia', method: 'POST',
      headers: { 'content-type': 'application/json' }, body: '{"challenge":' });
    assert.equal(bad.status, 400);
    const s = await stats();
    assert.equal(s.verify.calls, 0);
    assert.equal(s.settle.calls, 0);
  });

  it('a facilitator outage is 503 facilitator_unavailable and nothing is settled', async () => {
    await fetch(`${fac.url}/_outage`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"on":true}' });
    const r = await buy(`${base}/v1/check?name=Acme`, { version: 2, network: 'base-sepolia' });
    assert.equal(r.status, 503);
    assert.equal(r.json.error.code, 'facilitator_unavailable');
    const s = await stats();
    assert.equal(s.settle.success, 0);
    assert.equal(s.settled.length, 0);
  });

  it("the free trial's fourth call is 402 and never pays", async () => {
    for (let i = 0; i < 3; i++) {
      const r = await send(`${base}/v1/check?name=Trial%20Co&trial=1`);
      assert.equal(r.status, 200, r.body);
    }
    const r = await send(`${base}/v1/check?name=Trial%20Co&trial=1`);
    assert.equal(r.status, 402);
    assert.equal(r.json.trial.exhausted, true);
    assert.ok(r.paymentRequired?.accepts?.length === 1);
    const s = await stats();
    assert.equal(s.verify.calls, 0);
  });
});
