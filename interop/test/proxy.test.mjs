// payguard proxy between the official x402 buyers and sellers: over plain HTTP and over HTTPS through the
// MITM CA, with @x402/fetch (v2) and x402-fetch (v1) buyers and @x402/express and x402-express sellers.
//
// What each test proves is counted where the money would move: the facilitator's /_stats (what was verified
// and settled) and the seller's /stats (which payment headers reached it, which 200s it delivered paid).

import { describe, it, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startFacilitator } from '../lib/facilitator.mjs';
import { startSellerV2 } from '../lib/seller-v2.mjs';
import { startSellerV1 } from '../lib/seller-v1.mjs';
import { buy, send, makeDispatcher, encodePayment } from '../lib/buyer.mjs';
import { makeTestPKI } from '../lib/tls.mjs';
import { newSellerStats } from '../lib/seller-common.mjs';
import { ALT_PAY_TO, BUYER_ADDRESS, SELLER_PAY_TO, signAuthorization } from '../lib/wallets.mjs';
import { extractOffersFromPaymentRequired, verifyOfferSignatureEIP712, verifyReceiptSignatureEIP712 } from '@x402/extensions/offer-receipt';
import { adminClient, buildPayguard, freePort, proxyYAML, startPayguard, startProxy as startGuard } from '../lib/payguard.mjs';
import { runNode } from '../lib/spawn.mjs';
import { testRedis } from '../lib/redis.mjs';
import { execFileSync } from 'node:child_process';

const TOKEN = 'interop-admin-token-0123456789abcdef';
// Sanctions screening stays on (SPEC's default) with a real two-row excerpt of OFAC's sdn.csv; one of its
// Ethereum addresses is a seller's payTo below.
const RULES = {};
const SANCTIONS_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'testdata', 'ofac');
const SANCTIONED_PAY_TO = '0x098B716B8Aaf21512996dC57EB0615e2383E2f96'; // LAZARUS GROUP, uid 27307
const GUARD_ARGS = ['--offline', '--sanctions-dir', SANCTIONS_DIR];

let tmp;
let pki; // the sellers' upstream CA and leaf
let fac;
const sellers = {}; // name -> seller
let guard; // the running payguard proxy

before(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'interop-proxy-'));
  pki = makeTestPKI(path.join(tmp, 'upstream-pki'));
  fac = await startFacilitator();
  const f = fac.url;
  [sellers.v2, sellers.v1, sellers.v2tls, sellers.v1tls, sellers.v2sepolia, sellers.v2sanctioned, sellers.v1sanctioned] = await Promise.all([
    startSellerV2({ facilitatorUrl: f, network: 'base' }),
    startSellerV1({ facilitatorUrl: f, network: 'base' }),
    startSellerV2({ facilitatorUrl: f, network: 'base', tls: pki }),
    startSellerV1({ facilitatorUrl: f, network: 'base', tls: pki }),
    startSellerV2({ facilitatorUrl: f, network: 'base-sepolia' }),
    startSellerV2({ facilitatorUrl: f, network: 'base', payTo: SANCTIONED_PAY_TO }),
    startSellerV1({ facilitatorUrl: f, network: 'base', payTo: SANCTIONED_PAY_TO, tls: pki }),
  ]);
  guard = await startGuard({
    dir: path.join(tmp, 'guard-main'),
    token: TOKEN,
    upstreamCAFiles: [pki.caFile],
    rules: { ...RULES, max_per_payment_usd: 1, hold_above_usd: 0.25, daily_cap_usd: 25, payto_blocklist: [ALT_PAY_TO] },
    holdWait: '0s',
    args: GUARD_ARGS,
  });
});

after(async () => {
  await guard?.stop();
  await Promise.all([fac?.close(), ...Object.values(sellers).map((s) => s.close())]);
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

// Sellers run in this process, so their counters are reset directly (the HTTPS ones would need the CA).
function resetSellers() {
  for (const s of Object.values(sellers)) Object.assign(s.stats(), newSellerStats());
}

const facStats = async () => (await fetch(`${fac.url}/_stats`)).json();

// decisionLines are payguard's canonical decision log lines (one JSON line per decision) so far.
function decisionLines(g) {
  const out = [];
  for (const l of g.output().split('\n')) {
    if (!l.includes('"msg":"decision"')) continue;
    try {
      out.push(JSON.parse(l));
    } catch {
      // the first line of a trimmed output buffer may be cut
    }
  }
  return out;
}
// decisionLinesOf waits (up to 5 s) until n decision lines name receipt: payguard proxy writes its INFO lines
// at most 50 ms late (internal/logout's FlushDelay), so a line may follow the response it is about.
async function decisionLinesOf(g, receipt, n) {
  for (const deadline = Date.now() + 5000; ; await new Promise((r) => setTimeout(r, 20))) {
    const lines = decisionLines(g).filter((l) => l.receipt_id === receipt);
    if (lines.length >= n || Date.now() > deadline) return lines;
  }
}
const viaGuard = (url, opts = {}) => buy(url, { proxy: guard.proxyUrl, ca: guard.caPem, ...opts });

// The buyer/seller pairs every flow runs over: the official v2 and v1 clients, plain HTTP and MITM'd HTTPS.
const PAIRS = [
  { name: 'v2 buyer → v2 seller, HTTP', version: 2, seller: 'v2' },
  { name: 'v1 buyer → v1 seller, HTTP', version: 1, seller: 'v1' },
  { name: 'v2 buyer → v2 seller, HTTPS (MITM)', version: 2, seller: 'v2tls' },
  { name: 'v1 buyer → v1 seller, HTTPS (MITM)', version: 1, seller: 'v1tls' },
  { name: 'v2 buyer → v1 seller, HTTP', version: 2, seller: 'v1' },
  { name: 'v2 buyer → v1 seller, HTTPS (MITM)', version: 2, seller: 'v1tls' },
];

describe('allow: the payment goes through and is settled once', () => {
  beforeEach(async () => { await fetch(`${fac.url}/_reset`, { method: 'POST' }); resetSellers(); });

  for (const p of PAIRS) {
    it(p.name, async () => {
      const seller = sellers[p.seller];
      const r = await viaGuard(`${seller.url}/cheap`, { version: p.version });
      assert.equal(r.error, null, r.error);
      assert.equal(r.status, 200, `${r.status} ${r.body}`);
      assert.deepEqual(r.exchanges.map((e) => e.status), [402, 200]);
      assert.equal(r.paymentResponse?.success, true);
      assert.equal(r.headers['x-payguard-decision'], 'allow');
      // The paid 200 names the decision that let the payment through: the challenge's allow, by receipt id.
      const receipt = r.headers['x-payguard-receipt'];
      assert.match(receipt ?? '', /^rcpt_[0-9a-f]{32}$/);
      const lines = await decisionLinesOf(guard, receipt, 2);
      assert.deepEqual(lines.map((l) => [l.stage, l.decision]), [['challenge', 'allow'], ['payment', 'allow']]);
      const s = await facStats();
      assert.equal(s.settle.success, 1);
      assert.equal(s.settled[0].amount, '10000');
      // The seller built the resource URL from the Host and scheme it saw: payguard kept both as sent.
      assert.equal(s.settled[0].resource, `${seller.url}/cheap`);
      assert.equal(seller.stats().paid200, 1);
      assert.equal(seller.stats().paymentHeaders, 1);
    });
  }

  it('two options, the disallowed network first: the agent only sees, and pays, the allowed one', async () => {
    const seen = await send(`${sellers.v2.url}/multi`, { proxy: guard.proxyUrl });
    assert.equal(seen.status, 402);
    assert.equal(seen.headers['x-payguard-decision'], 'allow');
    assert.deepEqual(seen.paymentRequired.accepts.map((a) => a.network), ['eip155:8453']);
    const r = await viaGuard(`${sellers.v2.url}/multi`, { version: 2 });
    assert.equal(r.status, 200, r.body);
    assert.equal(r.paymentHeader.payload.accepted.network, 'eip155:8453');
    assert.equal(r.paymentResponse.network, 'eip155:8453');
    assert.deepEqual((await facStats()).settled.map((x) => x.network), ['eip155:8453']);
  });

  for (const name of ['v2', 'v2tls']) {
    it(`signed offers and receipt (offer-receipt extension) survive narrowing — ${name === 'v2' ? 'HTTP' : 'HTTPS (MITM)'}`, async () => {
      const seller = sellers[name];
      const seen = await send(`${seller.url}/signed`, { proxy: guard.proxyUrl, ca: guard.caPem });
      assert.equal(seen.status, 402);
      assert.deepEqual(seen.paymentRequired.accepts.map((a) => a.network), ['eip155:8453']);
      const offers = extractOffersFromPaymentRequired(seen.paymentRequired);
      assert.ok(offers.length >= 1, 'the offers reach the agent');
      for (const o of offers) {
        const v = await verifyOfferSignatureEIP712(o);
        assert.equal(v.signer, SELLER_PAY_TO, 'every offer the agent sees still verifies');
      }
      assert.ok(offers.some((o) => o.payload.network === 'eip155:8453' && o.payload.amount === '10000'));

      const r = await viaGuard(`${seller.url}/signed`, { version: 2 });
      assert.equal(r.status, 200, r.body);
      assert.ok(r.paymentHeader.value.length > 2500, 'the paying header carries the echoed extensions');
      assert.equal(r.paymentResponse.network, 'eip155:8453');
      const receipt = r.paymentResponse.extensions?.['offer-receipt']?.info?.receipt;
      assert.ok(receipt, 'the receipt reaches the agent');
      const v = await verifyReceiptSignatureEIP712(receipt);
      assert.equal(v.signer, SELLER_PAY_TO);
      assert.equal(v.payload.payer, BUYER_ADDRESS);
      assert.equal(seller.stats().paid200, 1);
    });
  }

  it('the buyer CLI pays through payguard: --proxy with --ca, and HTTPS_PROXY with NODE_EXTRA_CA_CERTS', async () => {
    const url = `${sellers.v2tls.url}/cheap`;
    const flags = await runNode('buyer.mjs', ['--url', url, '--proxy', guard.proxyUrl, '--ca', guard.caFile]);
    assert.equal(flags.code, 0, flags.stderr);
    assert.equal(JSON.parse(flags.stdout).status, 200);
    const env = await runNode('buyer.mjs', ['--url', url, '--proxy', 'env'], {
      env: { HTTPS_PROXY: guard.proxyUrl, HTTP_PROXY: guard.proxyUrl, NO_PROXY: '', no_proxy: '', NODE_EXTRA_CA_CERTS: guard.caFile },
    });
    assert.equal(env.code, 0, env.stderr);
    assert.equal(JSON.parse(env.stdout).status, 200);
    assert.equal(sellers.v2tls.stats().paid200, 2);
  });
});

// refused asserts a payguard refusal: 403 with a JSON decision, and no payment reached the seller or the
// facilitator.
async function assertRefusedBeforeSeller(r, seller, decision, reasonPattern) {
  assert.equal(r.status, 403, `${r.status} ${r.error ?? ''} ${r.body}`);
  assert.equal(r.json?.decision, decision, r.body);
  if (reasonPattern) assert.ok(r.json.reasons.some((x) => reasonPattern.test(x)), `reasons ${JSON.stringify(r.json.reasons)} lack ${reasonPattern}`);
  assert.equal(seller.stats().paymentHeaders, 0, 'no payment header reached the seller');
  const s = await facStats();
  assert.equal(s.verify.calls + s.settle.calls, 0, 'the facilitator never saw a payment');
}

describe('what is not a payment passes, and sellers cannot speak for payguard', () => {
  it('a 402 that is not x402 reaches the agent unchanged', async () => {
    for (const seller of [sellers.v2, sellers.v1tls]) {
      const r = await send(`${seller.url}/plain402`, { proxy: guard.proxyUrl, ca: guard.caPem });
      assert.equal(r.status, 402);
      assert.equal(r.body, 'subscription required\n');
      assert.equal(r.headers['x-payguard-decision'], undefined);
    }
  });

  it('X-Payguard-* headers forged by a seller are stripped', async () => {
    for (const seller of [sellers.v2, sellers.v2tls]) {
      const direct = await send(`${seller.url}/forge`, { ca: pki.caPem });
      assert.equal(direct.headers['x-payguard-hold'], 'forged-by-seller', 'the seller does forge them');
      const r = await send(`${seller.url}/forge`, { proxy: guard.proxyUrl, ca: guard.caPem });
      assert.equal(r.status, 200);
      assert.equal(r.headers['x-payguard-hold'], undefined);
      assert.equal(r.headers['x-payguard-decision'], undefined);
    }
  });
});

describe('block: 403 and the payment never exists', () => {
  beforeEach(async () => { await fetch(`${fac.url}/_reset`, { method: 'POST' }); resetSellers(); });

  for (const p of PAIRS) {
    it(`price above max_per_payment_usd — ${p.name}`, async () => {
      const seller = sellers[p.seller];
      const r = await viaGuard(`${seller.url}/pricey`, { version: p.version });
      await assertRefusedBeforeSeller(r, seller, 'block', /^block: amount .*exceeds max/);
    });
  }

  it('blocklisted payTo (v2 and v1, HTTP and HTTPS)', async () => {
    for (const p of PAIRS.slice(0, 4)) {
      const seller = sellers[p.seller];
      const r = await viaGuard(`${seller.url}/alt`, { version: p.version });
      await assertRefusedBeforeSeller(r, seller, 'block', /^block: payTo .* is on blocklist/i);
    }
  });

  it('payTo on the OFAC SDN list (v2 over HTTP, v1 over HTTPS)', async () => {
    for (const [seller, version] of [[sellers.v2sanctioned, 2], [sellers.v1sanctioned, 1]]) {
      const r = await viaGuard(`${seller.url}/cheap`, { version });
      await assertRefusedBeforeSeller(r, seller, 'block', /^block: payTo .* is an OFAC SDN-listed address/);
    }
  });

  it('a CONNECT tunnel to a plain-HTTP seller does not get a payment past the guard', async (t) => {
    const r = await viaGuard(`${sellers.v2.url}/pricey`, { version: 2, tunnel: true });
    t.diagnostic(`CONNECT to a plain-HTTP seller: status ${r.status} ${r.error ?? ''}`);
    assert.notEqual(r.status, 200);
    assert.equal(sellers.v2.stats().paymentHeaders, 0);
    const s = await facStats();
    assert.equal(s.verify.calls + s.settle.calls, 0);
  });

  it('disallowed network (base-sepolia is not in allowed_networks)', async () => {
    const r = await viaGuard(`${sellers.v2sepolia.url}/cheap`, { version: 2 });
    await assertRefusedBeforeSeller(r, sellers.v2sepolia, 'block', /^block: network .* not allowed/);
  });
});

describe('hold: a person decides through the admin API', () => {
  beforeEach(async () => { await fetch(`${fac.url}/_reset`, { method: 'POST' }); resetSellers(); });

  it('the admin API refuses a missing or wrong token', async () => {
    assert.equal((await adminClient(guard.adminUrl, '').holds()).status, 401);
    assert.equal((await adminClient(guard.adminUrl, 'wrong').budget()).status, 401);
  });

  for (const p of [PAIRS[0], PAIRS[3]]) {
    it(`hold → approve → the agent's retry succeeds once — ${p.name}`, async () => {
      const seller = sellers[p.seller];
      const admin = adminClient(guard.adminUrl, TOKEN);
      const first = await viaGuard(`${seller.url}/mid`, { version: p.version });
      await assertRefusedBeforeSeller(first, seller, 'hold', /^hold: amount .*above hold threshold/);
      const holdId = first.headers['x-payguard-hold'];
      assert.ok(holdId, 'the refusal names the hold');
      assert.equal(first.json.hold.id, holdId);
      assert.ok(first.headers['retry-after']);

      const approved = await admin.approve(holdId);
      assert.equal(approved.status, 200, approved.text);

      const retry = await viaGuard(`${seller.url}/mid`, { version: p.version });
      assert.equal(retry.status, 200, retry.body);
      assert.equal(retry.paymentResponse?.success, true);
      assert.equal(seller.stats().paid200, 1);
      const s = await facStats();
      assert.equal(s.settle.success, 1);
      assert.equal(s.settled[0].amount, '500000');

      // The approval was for one payment: the next identical request is held again.
      const third = await viaGuard(`${seller.url}/mid`, { version: p.version });
      assert.equal(third.status, 403);
      assert.equal(third.json.decision, 'hold');
      assert.notEqual(third.headers['x-payguard-hold'], holdId);
      assert.equal(seller.stats().paid200, 1);
      assert.equal((await facStats()).settle.success, 1);
      assert.equal((await admin.hold(holdId)).json.status, 'used');
    });
  }

  it('hold → deny → the retry is refused and nothing is paid', async (t) => {
    const seller = sellers.v2;
    const admin = adminClient(guard.adminUrl, TOKEN);
    const first = await viaGuard(`${seller.url}/mid`, { version: 2 });
    assert.equal(first.status, 403);
    const holdId = first.headers['x-payguard-hold'];
    assert.equal((await admin.deny(holdId)).status, 200);
    assert.equal((await admin.hold(holdId)).json.status, 'denied');
    const retry = await viaGuard(`${seller.url}/mid`, { version: 2 });
    t.diagnostic(`retry after a denied hold (hold_wait 0s): ${retry.status} ${retry.json?.decision} hold ${retry.headers['x-payguard-hold']}`);
    // A denial answers the request that waited for it; a later request is a new hold for a person to judge.
    await assertRefusedBeforeSeller(retry, seller, 'hold');
    assert.ok(retry.headers['x-payguard-hold'] && retry.headers['x-payguard-hold'] !== holdId);
  });

  describe('with hold_wait: the agent\'s request waits for the person', () => {
    let waiting;
    before(async () => {
      waiting = await startGuard({
        dir: path.join(tmp, 'guard-waiting'), token: TOKEN, upstreamCAFiles: [pki.caFile],
        rules: { ...RULES, hold_above_usd: 0.25 }, holdWait: '60s', args: GUARD_ARGS,
      });
    });
    after(async () => { await waiting?.stop(); });

    // decideWhileWaiting starts a paid request, waits until its hold is pending, resolves it, and returns
    // the request's result.
    async function decideWhileWaiting(seller, version, resolve) {
      const admin = adminClient(waiting.adminUrl, TOKEN);
      const known = new Set(((await admin.holds()).json?.holds ?? []).map((h) => h.id));
      let settled = false;
      const pending = buy(`${seller.url}/mid`, { version, proxy: waiting.proxyUrl, ca: waiting.caPem }).finally(() => { settled = true; });
      let id;
      while (!id) {
        const list = (await admin.holds('pending')).json?.holds ?? [];
        id = list.find((h) => !known.has(h.id))?.id;
        if (!id && settled) assert.fail(`the request finished without waiting on a hold: ${JSON.stringify(await pending)}`);
        if (!id) await new Promise((r) => setTimeout(r, 50));
      }
      const res = await (resolve === 'approve' ? admin.approve(id) : admin.deny(id));
      assert.equal(res.status, 200, res.text);
      return { id, result: await pending };
    }

    it('deny while waiting → 403 block', async () => {
      const { id, result } = await decideWhileWaiting(sellers.v1tls, 1, 'deny');
      await assertRefusedBeforeSeller(result, sellers.v1tls, 'block');
      assert.equal(result.headers['x-payguard-hold'], id);
    });

    it('approve while waiting → the same request is paid', async () => {
      const { result } = await decideWhileWaiting(sellers.v2, 2, 'approve');
      assert.equal(result.status, 200, result.body);
      assert.equal(result.paymentResponse?.success, true);
      assert.equal(sellers.v2.stats().paid200, 1);
      assert.equal((await facStats()).settled.at(-1).amount, '500000');
    });
  });
});

describe('payment headers payguard did not approve are refused before the seller', () => {
  beforeEach(async () => { await fetch(`${fac.url}/_reset`, { method: 'POST' }); resetSellers(); });

  for (const p of PAIRS.slice(0, 4)) {
    it(`tampered amount — ${p.name}`, async () => {
      const seller = sellers[p.seller];
      const r = await viaGuard(`${seller.url}/cheap`, { version: p.version, tamper: (pl) => { pl.payload.authorization.value = '1'; return pl; } });
      await assertRefusedBeforeSeller(r, seller, 'block');
    });
  }

  it('tampered recipient (v2)', async () => {
    const r = await viaGuard(`${sellers.v2.url}/cheap`, { version: 2, tamper: (pl) => { pl.payload.authorization.to = ALT_PAY_TO; return pl; } });
    await assertRefusedBeforeSeller(r, sellers.v2, 'block');
  });

  for (const p of PAIRS.slice(0, 4)) {
    it(`replayed payment header — ${p.name}`, async () => {
      const seller = sellers[p.seller];
      const first = await viaGuard(`${seller.url}/cheap`, { version: p.version });
      assert.equal(first.status, 200, first.body);
      const replay = await send(`${seller.url}/cheap`, {
        proxy: guard.proxyUrl, ca: guard.caPem, headers: { [first.paymentHeader.name]: first.paymentHeader.value },
      });
      assert.equal(replay.status, 403, replay.body);
      assert.equal(replay.json?.decision, 'block');
      assert.equal(seller.stats().paymentHeaders, 1, 'the replay never reached the seller');
      const s = await facStats();
      assert.equal(s.verify.calls, 1);
      assert.equal(s.settle.success, 1);
    });
  }
});

describe('facilitator outage behind the seller', () => {
  beforeEach(async () => { await fetch(`${fac.url}/_reset`, { method: 'POST' }); resetSellers(); });
  after(() => fetch(`${fac.url}/_outage`, { method: 'POST', body: '{"on":false}' }));

  it('nothing is delivered and nothing is counted as spent (behaviour recorded)', async (t) => {
    const admin = adminClient(guard.adminUrl, TOKEN);
    const before = (await admin.budget()).json;
    await fetch(`${fac.url}/_outage`, { method: 'POST', body: '{"on":true}' });
    const results = [];
    for (const p of [PAIRS[0], PAIRS[3]]) {
      const r = await viaGuard(`${sellers[p.seller].url}/cheap`, { version: p.version });
      results.push(r);
      t.diagnostic(`${p.name} during outage: ${r.status} exchanges ${r.exchanges.map((e) => e.status).join(',')} decision ${r.headers['x-payguard-decision']}`);
    }
    await fetch(`${fac.url}/_outage`, { method: 'POST', body: '{"on":false}' });
    const after = (await admin.budget()).json;
    t.diagnostic(`budget before ${JSON.stringify(before)} after ${JSON.stringify(after)}`);
    for (const r of results) assert.notEqual(r.status, 200);
    assert.equal(sellers.v2.stats().paid200 + sellers.v1tls.stats().paid200, 0);
    assert.equal((await facStats()).settle.calls, 0);
    assert.equal(after.spent_micros, before.spent_micros, 'an unsettled payment is not spent');
    assert.ok(after.reserved_micros >= before.reserved_micros + 20000, 'the failed payments stay reserved (SPEC: reservations are kept when a payment fails)');
  });
});

describe('a fleet: two proxies sharing one Redis budget', () => {
  const fleet = [];
  after(async () => { await Promise.all(fleet.map((g) => g.stop())); });

  it('30 simultaneous $0.01 payments spread over both proxies never exceed the shared $0.10 cap', async (t) => {
    await fetch(`${fac.url}/_reset`, { method: 'POST' });
    resetSellers();
    // A prefix of its own per run: the shared Redis (127.0.0.1:6379 on CI; see lib/redis.mjs) may hold other data.
    const prefix = `payguard-interop-${process.pid}-${Date.now()}:`;
    const { url } = await testRedis();
    const storeYAML = ['store:', '  driver: redis', '  redis:', `    url: ${JSON.stringify(url)}`, `    prefix: ${JSON.stringify(prefix)}`, '    allow_volatile: true', '    init_if_empty: true'].join('\n');
    for (const name of ['fleet-a', 'fleet-b']) {
      fleet.push(await startGuard({
        dir: path.join(tmp, name), token: TOKEN, upstreamCAFiles: [pki.caFile], rules: { ...RULES, daily_cap_usd: 0.1 },
        holdWait: '0s', args: GUARD_ARGS, budget: 'shared', storeYAML,
      }));
    }
    const dispatchers = fleet.map((g) => makeDispatcher({ proxy: g.proxyUrl }));
    let results;
    try {
      results = await Promise.all(Array.from({ length: 30 }, (_, i) =>
        buy(`${sellers.v2.url}/cheap`, { version: 2, dispatcher: dispatchers[i % 2] })));
    } finally {
      await Promise.all(dispatchers.map((d) => d.close()));
    }
    const ok = results.filter((r) => r.status === 200);
    t.diagnostic(`${ok.length} paid (${results.filter((r, i) => r.status === 200 && i % 2 === 0).length} through a, the rest through b)`);
    const sellerPaid = BigInt(sellers.v2.stats().paidAtomic);
    const settled = (await facStats()).settled.reduce((sum, x) => sum + BigInt(x.amount), 0n);
    assert.ok(sellerPaid <= 100000n, `sellers delivered ${sellerPaid} atomic units against a 100000 cap`);
    assert.equal(settled, sellerPaid);
    assert.equal(ok.length, 10);
    for (const g of fleet) {
      const b = (await adminClient(g.adminUrl, TOKEN).budget()).json;
      assert.equal(b.budget, 'shared');
      assert.equal(BigInt(b.spent_micros), sellerPaid, 'both proxies see the one shared ledger');
    }
  });
});

describe('one budget under concurrency, and across a restart', () => {
  let capped;
  const capDir = () => path.join(tmp, 'guard-capped');
  after(async () => { await capped?.stop(); });

  it('30 simultaneous $0.01 payments against a $0.10 daily cap never exceed it', async (t) => {
    await fetch(`${fac.url}/_reset`, { method: 'POST' });
    resetSellers();
    capped = await startGuard({ dir: capDir(), token: TOKEN, upstreamCAFiles: [pki.caFile], rules: { ...RULES, daily_cap_usd: 0.1 }, holdWait: '0s', args: GUARD_ARGS });
    const dispatcher = makeDispatcher({ proxy: capped.proxyUrl });
    let results;
    try {
      results = await Promise.all(Array.from({ length: 30 }, (_, i) =>
        buy(`${(i % 2 ? sellers.v1 : sellers.v2).url}/cheap`, { version: 2, dispatcher })));
    } finally {
      await dispatcher.close();
    }
    const ok = results.filter((r) => r.status === 200);
    const refused = results.filter((r) => r.status === 403);
    t.diagnostic(`${ok.length} paid, ${refused.length} refused`);
    assert.equal(ok.length + refused.length, 30, JSON.stringify(results.filter((r) => r.status !== 200 && r.status !== 403).map((r) => [r.status, r.error, r.body])));
    const sellerPaid = BigInt(sellers.v1.stats().paidAtomic) + BigInt(sellers.v2.stats().paidAtomic);
    const s = await facStats();
    const settled = s.settled.reduce((sum, x) => sum + BigInt(x.amount), 0n);
    assert.ok(sellerPaid <= 100000n, `sellers delivered ${sellerPaid} atomic units against a 100000 cap`);
    assert.ok(settled <= 100000n, `facilitator settled ${settled} against a 100000 cap`);
    assert.equal(settled, sellerPaid);
    // Every allowed payment settles here, so the cap is used exactly: 10 of the 30, no leak and no excess.
    assert.equal(ok.length, 10);
    assert.ok(refused.every((r) => r.json?.decision === 'block'), 'the rest were refused as blocks');
    const budget = await adminClient(capped.adminUrl, TOKEN).budget();
    assert.equal(budget.status, 200);
    assert.ok(budget.json.spent_micros + budget.json.reserved_micros <= 100000, JSON.stringify(budget.json));
    assert.equal(BigInt(budget.json.spent_micros), sellerPaid, 'payguard counts what the sellers were paid (USDC has 6 decimals, like micro-dollars)');
  });

  it('after a restart with the same data dir the spent amount is intact and still enforced', async () => {
    const before = await adminClient(capped.adminUrl, TOKEN).budget();
    assert.ok(before.json.spent_micros > 0);
    await capped.stop();
    capped = await startGuard({ dir: capDir(), token: TOKEN, upstreamCAFiles: [pki.caFile], rules: { ...RULES, daily_cap_usd: 0.1 }, holdWait: '0s', args: GUARD_ARGS });
    const after = await adminClient(capped.adminUrl, TOKEN).budget();
    assert.equal(after.status, 200);
    assert.equal(after.json.spent_micros, before.json.spent_micros);
    assert.equal(after.json.reserved_micros, before.json.reserved_micros);
    // One more $0.01: allowed only if the persisted spend leaves room under the cap.
    resetSellers();
    await fetch(`${fac.url}/_reset`, { method: 'POST' });
    const room = before.json.spent_micros + before.json.reserved_micros + 10000 <= 100000;
    const r = await buy(`${sellers.v2.url}/cheap`, { version: 2, proxy: capped.proxyUrl });
    if (room) {
      assert.equal(r.status, 200, r.body);
    } else {
      await assertRefusedBeforeSeller(r, sellers.v2, 'block', /daily cap/);
    }
  });
});

// startKillableGuard is startProxy with the child process at hand, so that a test can kill -9 it.
async function startKillableGuard(dir) {
  const bin = await buildPayguard();
  fs.mkdirSync(dir, { recursive: true });
  const caFile = path.join(dir, 'ca', 'payguard-ca.pem');
  if (!fs.existsSync(caFile)) execFileSync(bin, ['ca', 'init', '--out', path.join(dir, 'ca')]);
  const [pp, ap] = await Promise.all([freePort(), freePort()]);
  const proxyAddr = `127.0.0.1:${pp}`;
  const adminAddr = `127.0.0.1:${ap}`;
  const yaml = proxyYAML({ proxyAddr, adminAddr, dataDir: dir, upstreamCAFiles: [pki.caFile], rules: RULES, holdWait: '0s' });
  const run = await startPayguard({ mode: 'proxy', yaml, dir, args: GUARD_ARGS, waitFor: [proxyAddr, adminAddr], env: { PAYGUARD_ADMIN_TOKEN: TOKEN } });
  return { ...run, proxyUrl: `http://${proxyAddr}`, adminUrl: `http://${adminAddr}`, admin: adminClient(`http://${adminAddr}`, TOKEN) };
}

describe('kill -9 and a restart with the same data dir', () => {
  let g;
  after(async () => { await g?.stop(); });

  it('keeps today\'s spend, the reservation and ticket of an allowed challenge, and a pending hold', async () => {
    await fetch(`${fac.url}/_reset`, { method: 'POST' });
    resetSellers();
    const dir = path.join(tmp, 'guard-killed');
    const seller = sellers.v2;
    g = await startKillableGuard(dir);
    assert.equal((await buy(`${seller.url}/cheap`, { version: 2, proxy: g.proxyUrl })).status, 200);
    // Allowed, not yet paid: a ticket and a $0.01 reservation.
    const challenge = await send(`${seller.url}/cheap`, { proxy: g.proxyUrl });
    assert.equal(challenge.status, 402);
    const allowReceipt = challenge.headers['x-payguard-receipt'];
    assert.ok(allowReceipt);
    const held = await buy(`${seller.url}/mid`, { version: 2, proxy: g.proxyUrl });
    assert.equal(held.json?.decision, 'hold', held.body);
    const holdId = held.headers['x-payguard-hold'];
    const before = (await g.admin.budget()).json;
    assert.deepEqual([before.spent_micros, before.reserved_micros], [10000, 10000]);

    g.proc.kill('SIGKILL');
    assert.equal((await g.stop()).signal, 'SIGKILL');
    g = await startKillableGuard(dir);

    const after = (await g.admin.budget()).json;
    assert.deepEqual([after.spent_micros, after.reserved_micros], [10000, 10000], 'spend and reservation survive kill -9');
    assert.deepEqual(((await g.admin.holds('pending')).json?.holds ?? []).map((h) => h.id), [holdId], 'the pending hold survives');

    // The ticket from before the kill releases the payment for the challenge it allowed, under its receipt.
    const accepted = challenge.paymentRequired.accepts[0];
    const now = Math.floor(Date.now() / 1000);
    const payload = await signAuthorization({ chainId: 8453, to: accepted.payTo, value: accepted.amount, validBefore: String(now + 60) });
    const header = encodePayment({ x402Version: 2, resource: challenge.paymentRequired.resource, accepted, payload });
    const paid = await send(`${seller.url}/cheap`, { proxy: g.proxyUrl, headers: { 'PAYMENT-SIGNATURE': header } });
    assert.equal(paid.status, 200, paid.body);
    assert.equal(paid.paymentResponse?.success, true);
    assert.equal(paid.headers['x-payguard-receipt'], allowReceipt);

    // The hold from before the kill is approved after it, and used once.
    assert.equal((await g.admin.approve(holdId)).status, 200);
    assert.equal((await buy(`${seller.url}/mid`, { version: 2, proxy: g.proxyUrl })).status, 200);
    assert.equal((await g.admin.hold(holdId)).json.status, 'used');

    const final = (await g.admin.budget()).json;
    assert.deepEqual([final.spent_micros, final.reserved_micros], [520000, 0]);
    assert.equal(seller.stats().paid200, 3);
    assert.deepEqual((await facStats()).settled.map((x) => x.amount), ['10000', '10000', '500000']);
  });
});
