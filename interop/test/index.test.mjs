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
import { buy, send } from '../lib/buyer.mjs';
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

// settledTo counts the facilitator's settlements to payTo.
async function settledTo(payTo) {
  const stats = await (await fetch(`${fac.url}/_stats`)).json();
  return stats.settled.filter((s) => String(s.payTo || s.to || '').toLowerCase() === payTo.toLowerCase()).length;
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

  // The attack of issue 30, as run: a seller with a paid payee-A history at /weather answers 302 to
  // another spelling of /weather (or another URL of its site) whose 402 names payee B. Each was allowed
  // and paid on the previous main (a new Index key, no history); each is held now, and B is never paid.
  it('a payee swap behind a redirect to another spelling or URL of the site is held, never paid', async () => {
    const seller = await startIndexSeller({ facilitatorUrl: fac.url, payTo: SELLER_PAY_TO, host: '127.0.0.5' });
    try {
      const url = `${seller.url}/weather`;
      const first = await viaGuard(url);
      assert.equal(first.status, 200, `${first.status} ${first.body} ${first.error}`);
      await waitObserved(url, 2);
      const altBefore = await settledTo(ALT_PAY_TO);
      const variants = ['/weather/', '/%77eather', '/Weather', '/weather;x'].map((p) => seller.url + p);
      variants.push(`http://[::ffff:127.0.0.5]:${seller.port}/weather`, `${seller.url}/weather2`);
      for (const v of variants) {
        await seller.hijack(v, ALT_PAY_TO);
        // Through the redirect: the variant's 402 itself is held, the agent never sees payee B's terms (on
        // main it got them, allowed; only its paying retry of /weather happened to be held).
        for (const target of [url, v]) { // and asked directly, as a link to the variant would be
          const r = await viaGuard(target);
          assert.equal(r.status, 403, `${target} (redirect to ${v}): ${r.status} ${r.body} ${r.error}`);
          const body = refusal(r);
          assert.equal(body.decision, 'hold', `${target}: ${r.body}`);
          assert.ok(body.reasons.some((x) => x.startsWith('hold: endpoint_payto_changed: ')), `${target}: ${JSON.stringify(body.reasons)}`);
        }
      }
      assert.equal(await settledTo(ALT_PAY_TO), altBefore, 'payee B was paid');
    } finally {
      await seller.close();
    }
  });

  // The attack on the category median, as run: three 402s declaring "weather" at $0.0001 from three other
  // addresses, fetched once each through the proxy and never paid. On the previous main the honest
  // seller's next payment ($0.01, its own history $0.01) was then "more than 5x the median $0.0001"; unpaid
  // 402s now describe only their own endpoints. The proxy is restarted on its data dir before that
  // payment, as any proxy's cache of the sample is renewed within seconds.
  it('unpaid 402s declaring a category at $0.0001 do not make an honest seller\'s next payment a hold', async () => {
    const dir = path.join(tmp, 'category');
    const opts = { dir, token: TOKEN, holdWait: '0s', rules: { max_per_payment_usd: 1, hold_above_usd: 0.25, daily_cap_usd: 25 },
      args: ['--offline', '--sanctions-dir', SANCTIONS_DIR] };
    let g = await startProxy(opts);
    const honest = await startIndexSeller({ facilitatorUrl: fac.url, payTo: SELLER_PAY_TO, category: 'weather', host: '127.0.0.6' });
    const cheap = [];
    try {
      const via = (u) => buy(u, { proxy: g.proxyUrl, ca: g.caPem, version: 2 });
      const url = `${honest.url}/weather`;
      const first = await via(url);
      assert.equal(first.status, 200, `${first.status} ${first.body} ${first.error}`);
      for (const host of ['127.0.0.2', '127.0.0.3', '127.0.0.4']) {
        const s = await startIndexSeller({ facilitatorUrl: fac.url, payTo: ALT_PAY_TO, price: '$0.0001', category: 'weather', host });
        cheap.push(s);
        const r = await send(`${s.url}/weather`, { proxy: g.proxyUrl, ca: g.caPem });
        assert.equal(r.status, 402, `the cheap 402 of ${host}: ${r.status} ${r.body}`);
      }
      await g.stop();
      g = await startProxy(opts);
      const next = await via(url);
      assert.equal(next.status, 200, `the honest seller's next payment: ${next.status} ${next.body} ${next.error}`);
    } finally {
      await g.stop();
      await honest.close();
      for (const s of cheap) await s.close();
    }
  });
});
