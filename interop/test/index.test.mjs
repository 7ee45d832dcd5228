// The Endpoint Index through the real proxy with the official x402 packages: every 402 the proxy decodes and
// every paid response it forwards is recorded, and the Index rules decide with it. A seller restarted with
// another payTo (a hijacked payee) or a 10x price is held, the reason naming both values; the seller's bazaar
// metadata is recorded and served by the admin API's GET /v1/endpoints.

import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startFacilitator } from '../lib/facilitator.mjs';
import { startIndexSeller } from '../lib/seller-index.mjs';
import { buy } from '../lib/buyer.mjs';
import { ALT_PAY_TO, SELLER_PAY_TO } from '../lib/wallets.mjs';
import { startProxy } from '../lib/payguard.mjs';
import { fileURLToPath } from 'node:url';

const TOKEN = 'interop-index-token-0123456789abcdef';
const SANCTIONS_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'testdata', 'ofac');

let tmp;
let fac;
let guard;

before(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'interop-index-'));
  fac = await startFacilitator();
  guard = await startProxy({ dir: path.join(tmp, 'guard'), token: TOKEN, holdWait: '0s',
    rules: { max_per_payment_usd: 1, hold_above_usd: 0.25, daily_cap_usd: 25 },
    args: ['--offline', '--sanctions-dir', SANCTIONS_DIR] });
});

after(async () => {
  await guard?.stop();
  await fac?.close();
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

const viaGuard = (url) => buy(url, { proxy: guard.proxyUrl, ca: guard.caPem, version: 2 });

async function endpoints(url) {
  const res = await fetch(`${guard.adminUrl}/v1/endpoints?url=${encodeURIComponent(url)}`, { headers: { authorization: `Bearer ${TOKEN}` } });
  return { status: res.status, body: await res.json() };
}

// The writer is asynchronous: wait until the admin API shows n observations of url.
async function waitObserved(url, n) {
  for (let i = 0; i < 200; i++) {
    const r = await endpoints(url);
    if (r.status === 200 && r.body.observations.length >= n) return r.body;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`fewer than ${n} observations of ${url}`);
}

// refusal is the proxy's 403 body: the agent never got a challenge to sign.
function refusal(r) {
  assert.equal(r.status, 403, `${r.status} ${r.body} ${r.error}`);
  assert.deepEqual(r.exchanges.map((e) => e.status), [403]);
  return JSON.parse(r.body);
}

describe('Endpoint Index: observations from the proxy decide the Index rules', () => {
  it('a seller restarted with another payTo is held, naming both addresses', async () => {
    let seller = await startIndexSeller({ facilitatorUrl: fac.url, payTo: SELLER_PAY_TO });
    const url = `${seller.url}/weather`;
    const first = await viaGuard(url);
    assert.equal(first.status, 200, `${first.status} ${first.body} ${first.error}`);
    const seen = await waitObserved(url, 2); // the 402 and the paid 200
    assert.deepEqual(seen.observations.map((o) => o.source).sort(), ['proxy_402', 'proxy_paid']);
    const port = seller.port;
    await seller.close();

    seller = await startIndexSeller({ facilitatorUrl: fac.url, payTo: ALT_PAY_TO, port });
    try {
      const second = await viaGuard(url);
      assert.notEqual(second.status, 200, 'the payment to the new payee went through');
      const body = refusal(second);
      assert.equal(body.decision, 'hold');
      const reason = body.reasons.find((r) => r.startsWith('hold: endpoint_payto_changed: '));
      assert.ok(reason, JSON.stringify(body.reasons));
      assert.ok(reason.includes(ALT_PAY_TO) && reason.toLowerCase().includes(SELLER_PAY_TO.toLowerCase()), reason);
      const settled = (await (await fetch(`${fac.url}/_stats`)).json()).settled.filter((s) => s.resource === url);
      assert.equal(settled.length, 1, 'only the first run paid');
    } finally {
      await seller.close();
    }
  });

  it('a price raised 10x is held, naming both prices', async () => {
    let seller = await startIndexSeller({ facilitatorUrl: fac.url, payTo: SELLER_PAY_TO, price: '$0.01' });
    const url = `${seller.url}/weather`;
    const first = await viaGuard(url);
    assert.equal(first.status, 200, `${first.status} ${first.body} ${first.error}`);
    await waitObserved(url, 2);
    const port = seller.port;
    await seller.close();
    seller = await startIndexSeller({ facilitatorUrl: fac.url, payTo: SELLER_PAY_TO, price: '$0.10', port });
    try {
      const body = refusal(await viaGuard(url));
      assert.equal(body.decision, 'hold');
      assert.ok(body.reasons.includes(
        'hold: endpoint_price_above_category_median: $0.1 is more than 5x the median $0.01 (own_history, 1 samples)'),
      JSON.stringify(body.reasons));
    } finally {
      await seller.close();
    }
  });

  it("the seller's bazaar metadata is recorded", async () => {
    const seller = await startIndexSeller({ facilitatorUrl: fac.url, payTo: SELLER_PAY_TO });
    try {
      const url = `${seller.url}/weather`;
      await viaGuard(url);
      const seen = await waitObserved(url, 1);
      const challenge = seen.observations.find((o) => o.source === 'proxy_402');
      const meta = JSON.parse(Buffer.from(challenge.metadata, 'base64').toString('utf8'));
      assert.equal(meta.info.input.type, 'http');
      assert.equal(meta.info.input.method, 'GET');
      assert.deepEqual(meta.info.output.example, { temperature: 21 });
      assert.equal(seen.summary.payto_history[0].current[0], SELLER_PAY_TO.toLowerCase());
      assert.equal(seen.summary.live, true);
    } finally {
      await seller.close();
    }
  });
});
