// The guard attacked as issue 29 did, with the official @x402/fetch buyer, real signatures and a local seller
// that counts the payments that land: a seller's claimed resource.url, per-option holds, a throwing
// onDecision, the SDK's option choice, and the error a refusal throws.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { wrapFetchWithPayment, x402Client, x402HTTPClient } from '@x402/fetch';
import { registerExactEvmScheme } from '@x402/evm/exact/client';
import { privateKeyToAccount } from 'viem/accounts';
import { PaymentRefusedError, createGuard, guard, guardV1Fetch } from '../src/index.js';
import { BASE_USDC, BUYER_KEY, PAY_TO, challenge, countingClient, payVia } from './helpers.mjs';

const LOCAL = { screenSanctions: false };
const BASE_SEPOLIA_USDC = '0x036CbD53842c5426634e7929541eC2318f3dCF7e';

/**
 * seller answers every unpaid request with `make(url)` as a v2 PAYMENT-REQUIRED header (or a v1 body), and
 * counts the requests that carry a payment (it does not verify them: what matters is what was signed and sent).
 */
async function seller(make, { v1 = false } = {}) {
  const paid = [];
  const server = http.createServer((req, res) => {
    const payment = req.headers['payment-signature'] ?? req.headers['x-payment'];
    if (payment) {
      paid.push(JSON.parse(Buffer.from(payment, 'base64').toString('utf8')));
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"ok":true}');
      return;
    }
    const ch = make(`http://${req.headers.host}${req.url}`);
    if (v1) {
      res.writeHead(402, { 'content-type': 'application/json' });
      res.end(JSON.stringify(ch));
    } else {
      res.writeHead(402, { 'payment-required': Buffer.from(JSON.stringify(ch)).toString('base64'), 'content-type': 'application/json' });
      res.end('{}');
    }
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${server.address().port}`;
  return { url, paid, close: () => new Promise((r) => server.close(r)) };
}

/** buyer: the official v2 buyer (SDK $1 cap off, so that what refuses is the guard), guarded through its HTTP client. */
function buyer(options, { bare = false } = {}) {
  const account = privateKeyToAccount(BUYER_KEY);
  const signer = { ...account, signs: 0, async signTypedData(t) { signer.signs++; return account.signTypedData(t); } };
  const client = new x402Client().setSpendControls(false);
  registerExactEvmScheme(client, { signer });
  const g = createGuard(options);
  const target = bare ? client : new x402HTTPClient(client);
  g.attach(target);
  return { pay: wrapFetchWithPayment(fetch, target), guard: g, signer };
}

const rejectsWith = async (p, check) => {
  let err;
  try { await p; } catch (e) { err = e; }
  assert.ok(err, 'expected a refusal');
  check(err);
  return err;
};

test('a seller on a blocklisted host claiming a trusted resource.url is refused on the URL requested', async () => {
  const s = await seller(() => challenge(10000, { url: 'https://trusted.example/data' }));
  try {
    for (const rules of [{ ...LOCAL, domainBlocklist: ['127.0.0.1'] },
      { ...LOCAL, strictAllowlist: true, domainAllowlist: ['trusted.example'], paytoAllowlist: [PAY_TO] }]) {
      const b = buyer({ rules });
      const err = await rejectsWith(b.pay(`${s.url}/data`), (e) => assert.ok(e instanceof PaymentRefusedError, String(e)));
      assert.match(err.reasons.join(' '), /domain 127\.0\.0\.1 (is on blocklist|not on allowlist)/);
      assert.equal(err.url, `${s.url}/data`);
      assert.equal(b.signer.signs, 0);
    }
    assert.equal(s.paid.length, 0);
  } finally {
    await s.close();
  }
});

test('a guard that cannot see the URL holds on the unknown domain, whatever the claim', async () => {
  const s = await seller(() => challenge(10000, { url: 'https://trusted.example/data' }));
  try {
    const b = buyer({ rules: { ...LOCAL, domainAllowlist: ['trusted.example'] } }, { bare: true });
    await rejectsWith(b.pay(`${s.url}/data`), (e) => assert.match(e.message, /hold: could not determine merchant domain/));
    assert.equal(b.signer.signs, 0);
    assert.equal(s.paid.length, 0);
  } finally {
    await s.close();
  }
});

test('guardV1Fetch judges the URL it fetched, not accepts[].resource', async () => {
  const s = await seller(() => ({
    x402Version: 1, error: 'X-PAYMENT header is required',
    accepts: [{ scheme: 'exact', network: 'base', maxAmountRequired: '10000', resource: 'https://trusted.example/data',
      description: '', mimeType: 'application/json', payTo: PAY_TO, maxTimeoutSeconds: 60, asset: BASE_USDC,
      extra: { name: 'USD Coin', version: '2' } }],
  }), { v1: true });
  try {
    const f = guardV1Fetch(fetch, { rules: { ...LOCAL, domainBlocklist: ['127.0.0.1'] } });
    const res = await f(`${s.url}/data`);
    assert.equal(res.status, 403);
    assert.match(JSON.stringify(await res.json()), /domain 127\.0\.0\.1 is on blocklist/);
  } finally {
    await s.close();
  }
});

test('the sidecar is sent the requested URL, never the claim; without one, no url at all', async () => {
  const asked = [];
  const side = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => { body += c; });
    req.on('end', () => {
      asked.push(JSON.parse(body));
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ decision: 'block', reasons: ['block: domain evil.example is on blocklist'], amount_micros: 0 }));
    });
  });
  await new Promise((r) => side.listen(0, '127.0.0.1', r));
  try {
    const opts = { sidecar: { url: `http://127.0.0.1:${side.address().port}`, token: 'decide-only-token-0123' } };
    const { http: h1, signer } = countingClient();
    guard(h1, opts);
    await assert.rejects(payVia(h1, challenge(10000, { url: 'https://trusted.example/x' }), 'https://pay.evil.example/x'), PaymentRefusedError);
    const { client: bare } = countingClient();
    guard(bare, opts);
    await assert.rejects(bare.createPaymentPayload(challenge(10000, { url: 'https://trusted.example/x' })), PaymentRefusedError);
    assert.equal(asked[0].url, 'https://pay.evil.example/x');
    assert.equal('url' in asked[1], false);
    assert.equal(signer.signs, 0);
  } finally {
    await new Promise((r) => side.close(r));
  }
});

test('the sidecar is told the agent it decides for (Proxy-Authorization), and nothing when none is given', async () => {
  const auth = [];
  const side = http.createServer((req, res) => {
    auth.push(req.headers['proxy-authorization']);
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ decision: 'block', reasons: ['block: x'], amount_micros: 0 }));
    });
  });
  await new Promise((r) => side.listen(0, '127.0.0.1', r));
  try {
    const url = `http://127.0.0.1:${side.address().port}`;
    for (const agent of [{ id: 'research', secret: 's3cret' }, undefined]) {
      const { http: h } = countingClient();
      guard(h, { sidecar: { url, token: 'decide-only-token-0123', agent } });
      await assert.rejects(payVia(h, challenge(10000, { url: 'https://shop.example/x' }), 'https://shop.example/x'), PaymentRefusedError);
    }
    assert.equal(auth[0], `Basic ${Buffer.from('research:s3cret').toString('base64')}`);
    assert.equal(auth[1], undefined);
  } finally {
    await new Promise((r) => side.close(r));
  }
});

test('a per-option hold shows, reserves and, approved, pays its option\'s amount', async () => {
  const s = await seller((url) => challenge(900_000, { url }));
  try {
    const seen = [];
    const b = buyer({
      rules: { ...LOCAL, dailyCapUsd: 1, holdAboveUsd: 1, strictAllowlist: true, domainAllowlist: ['127.0.0.1'],
        paytoAllowlist: ['0x1111111111111111111111111111111111111111'] },
      onHold: (h) => { seen.push(h); return true; },
    });
    assert.equal((await b.pay(`${s.url}/a`)).status, 200);
    assert.equal(seen[0].amountUsd, '0.9');
    assert.match(seen[0].reasons[0], /not on allowlist/);
    assert.equal(b.guard.spent().spentUsd, '0.9');
    for (const path of ['/b', '/c']) {
      await rejectsWith(b.pay(`${s.url}${path}`), (e) => assert.match(e.message, /daily cap \$1 would be exceeded \(spent \$0\.9\)/));
    }
    assert.equal(b.signer.signs, 1);
    assert.equal(s.paid.length, 1);
  } finally {
    await s.close();
  }
});

test('a throwing onDecision neither refuses nor consumes budget; the event is JSON', async () => {
  const s = await seller((url) => challenge(10000, { url }));
  try {
    const events = [];
    const b = buyer({ rules: { ...LOCAL, dailyCapUsd: 0.02 }, onDecision: (e) => { events.push(JSON.stringify(e)); throw new Error('logger down'); } });
    assert.equal((await b.pay(`${s.url}/a`)).status, 200);
    assert.equal((await b.pay(`${s.url}/b`)).status, 200);
    assert.equal(b.guard.spent().spentUsd, '0.02');
    assert.equal(s.paid.length, 2);
    const e = JSON.parse(events[0]);
    assert.deepEqual({ ...e, url: undefined }, { decision: 'allow', reasons: ['allow: all rules passed'], amountUsd: '0.01', amountMicros: 10000, approved: true, url: undefined });
    // An async logger that rejects is ignored too.
    const a = buyer({ rules: LOCAL, onDecision: async () => { throw new Error('async logger down'); } });
    assert.equal((await a.pay(`${s.url}/c`)).status, 200);
  } finally {
    await s.close();
  }
});

test('[base-sepolia $0.01, Base $0.01]: the SDK is steered to Base, as the engine chooses', async () => {
  const s = await seller((url) => {
    const ch = challenge(10000, { url, network: 'eip155:84532', asset: BASE_SEPOLIA_USDC });
    ch.accepts.push(challenge(10000, { url }).accepts[0]);
    return ch;
  });
  try {
    const b = buyer({ rules: LOCAL });
    assert.equal((await b.pay(`${s.url}/data`)).status, 200);
    assert.equal(s.paid[0].accepted.network, 'eip155:8453');
    assert.equal(b.signer.signs, 1);
  } finally {
    await s.close();
  }
});

test('a refusal is a PaymentRefusedError with decision and reasons, said once', async () => {
  const s = await seller((url) => challenge(5_000_000, { url }));
  try {
    const b = buyer({ rules: LOCAL });
    const err = await rejectsWith(b.pay(`${s.url}/pricey`), () => {});
    assert.ok(err instanceof PaymentRefusedError);
    assert.equal(err.decision, 'block');
    assert.deepEqual(err.reasons, ['block: amount $5 exceeds max $1']);
    assert.equal(err.message, 'payguard: block: amount $5 exceeds max $1');
    assert.equal(err.receipt, null); // a local decision has no signed receipt
    assert.equal(err.amountUsd, '0');
  } finally {
    await s.close();
  }
});

test('a redirect to another host: the guard judges the host that answered 402', async () => {
  const s = await seller((url) => challenge(10000, { url: 'https://trusted.example/data' }));
  const port = new URL(s.url).port;
  // The agent asks 127.0.0.1, which redirects to localhost (the seller's other name), which asks for payment.
  const front = http.createServer((req, res) => { res.writeHead(302, { location: `http://localhost:${port}${req.url}` }); res.end(); });
  await new Promise((r) => front.listen(0, '127.0.0.1', r));
  try {
    const b = buyer({ rules: { ...LOCAL, domainBlocklist: ['localhost'] } });
    const err = await rejectsWith(b.pay(`http://127.0.0.1:${front.address().port}/data`), (e) => assert.ok(e instanceof PaymentRefusedError, String(e)));
    assert.deepEqual(err.reasons, ['block: domain localhost is on blocklist']);
    assert.equal(err.url, `http://localhost:${port}/data`);
    assert.equal(b.signer.signs, 0);
    assert.equal(s.paid.length, 0);
  } finally {
    await new Promise((r) => front.close(r));
    await s.close();
  }
});

test('other spellings of the requested host are the same host', async () => {
  const g = createGuard({ rules: { ...LOCAL, domainBlocklist: ['evil.example', 'bücher.example'] } });
  const ch = challenge(10000, { url: 'https://trusted.example/data' });
  for (const url of ['https://EVIL.example./x', 'https://pay.evil.example:8443/x', 'https://ｅｖｉｌ.example/x', 'https://xn--bcher-kva.example/x', 'https://user@evil.example/x']) {
    const d = await g.decide({ paymentRequired: ch, selected: ch.accepts[0], resourceUrl: url });
    assert.equal(d.decision, 'block', `${url}: ${d.reasons}`);
  }
  assert.equal(g.spent().spentUsd, '0');
});
