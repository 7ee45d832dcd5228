// The guard in the official @x402/core client's hook: decided before signing, reserved before signing,
// serialized, reset only when the UTC day advances. The signer counts signatures: a refusal must leave it at 0.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { createGuard, feeGuard, guard } from '../src/index.js';
import { challenge, clock, countingClient, payVia } from './helpers.mjs';

const LOCAL = { screenSanctions: false }; // local mode has no sanctions list: acknowledged explicitly

test('an allowed payment is signed and reserved', async () => {
  const { client, signer, http } = countingClient();
  const g = createGuard({ rules: LOCAL });
  g.attach(http);
  const payload = await payVia(http, challenge(10000));
  assert.equal(payload.accepted.amount, '10000');
  assert.equal(signer.signs, 1);
  assert.equal(g.spent().spentUsd, '0.01');
});

test('a payment over the cap is refused before signing', async () => {
  const { client, signer, http } = countingClient();
  guard(http, { rules: LOCAL });
  await assert.rejects(payVia(http, challenge(5_000_000)), /payguard: block: amount \$5 exceeds max \$1/);
  assert.equal(signer.signs, 0);
});

test('defaults hold without a sanctions source, and a hold without onHold is refused', async () => {
  const { client, signer, http } = countingClient();
  guard(http, {});
  await assert.rejects(payVia(http, challenge(10000)), /hold: sanctions data unavailable/);
  assert.equal(signer.signs, 0);
});

test('onHold decides holds: false and errors refuse, true pays', async () => {
  for (const [answer, pays] of [[false, false], [undefined, false], ['yes', false], [() => { throw new Error('x'); }, false], [true, true]]) {
    const { client, signer, http } = countingClient();
    const seen = [];
    const g = createGuard({ rules: LOCAL, onHold: (h) => { seen.push(h); return typeof answer === 'function' ? answer() : answer; } });
    g.attach(http);
    const p = payVia(http, challenge(500_000));
    if (pays) await p; else await assert.rejects(p, /hold: amount \$0.5 above hold threshold \$0.25/);
    assert.equal(signer.signs, pays ? 1 : 0);
    assert.equal(seen.length, 1);
    assert.equal(seen[0].amountUsd, '0.5');
    // A refused hold never reached signing: its reservation is given back.
    assert.equal(g.spent().spentUsd, pays ? '0.5' : '0');
  }
});

test('the reservation is kept when signing fails', async () => {
  const { client, signer, http } = countingClient({ failSigning: true });
  const g = createGuard({ rules: { ...LOCAL, dailyCapUsd: 0.015 } });
  g.attach(http);
  await assert.rejects(payVia(http, challenge(10000)), /unplugged/);
  assert.equal(signer.signs, 1);
  assert.equal(g.spent().spentUsd, '0.01');
  // The kept reservation counts: a second cent would exceed the cap.
  await assert.rejects(payVia(http, challenge(10000)), /daily cap \$0.015 would be exceeded \(spent \$0.01\)/);
});

test('20 concurrent payments against a $0.05 cap at $0.01: exactly 5 are signed', async () => {
  const { client, signer, http } = countingClient();
  const g = createGuard({ rules: { ...LOCAL, dailyCapUsd: 0.05 } });
  g.attach(http);
  const results = await Promise.allSettled(Array.from({ length: 20 }, () => payVia(http, challenge(10000))));
  assert.equal(results.filter((r) => r.status === 'fulfilled').length, 5);
  assert.equal(signer.signs, 5);
  assert.equal(g.spent().spentUsd, '0.05');
});

test('the budget resets only when the UTC day advances', async () => {
  const now = clock('2026-11-22T23:59:58Z');
  const { http } = countingClient();
  const g = createGuard({ rules: { ...LOCAL, dailyCapUsd: 0.02 }, now });
  g.attach(http);
  await payVia(http, challenge(20000));
  await assert.rejects(payVia(http, challenge(10000)), /daily cap/);
  now.set('2026-11-23T00:00:00Z'); // a new UTC day
  await payVia(http, challenge(20000));
  assert.deepEqual(g.spent(), { day: '2026-11-23', spentUsd: '0.02', dailyCapUsd: '0.02' });
  now.set('2026-11-22T12:00:00Z'); // a clock that goes back does not start a fresh day
  await assert.rejects(payVia(http, challenge(10000)), /daily cap/);
  now.set('2026-11-23T23:00:00+05:00'); // 18:00 UTC: still the same UTC day
  await assert.rejects(payVia(http, challenge(10000)), /daily cap/);
});

test('only the selected offer is screened', async () => {
  const { client, signer, http } = countingClient();
  guard(http, { rules: { ...LOCAL, paytoBlocklist: ['0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC'] } });
  const ch = challenge(10000);
  // A blocklisted second offer the client does not select (the default selector takes the first).
  ch.accepts.push({ ...ch.accepts[0], payTo: '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC' });
  await payVia(http, ch);
  assert.equal(signer.signs, 1);
});

test('rules are camelCase and checked', () => {
  assert.throws(() => createGuard({ rules: { max_per_payment_usd: 1 } }), /unknown rule "max_per_payment_usd" \(use maxPerPaymentUsd\)/);
  assert.throws(() => createGuard({ rules: { dailyCapUsd: -1 } }), /dailyCapUsd/);
  assert.throws(() => createGuard({ rules: { usdcOnly: 'yes' } }), /usdcOnly: not a boolean/);
  assert.throws(() => createGuard({ rules: { allowedNetworks: Array(101).fill('base') } }), /at most 100/);
  assert.throws(() => createGuard({ remote: true }), /remoteUrl/);
  assert.throws(() => createGuard({ onError: 'block' }), /onError/);
  assert.throws(() => createGuard({ rule: {} }), /unknown option "rule"/);
  assert.throws(() => guard({}, {}), /x402Client/);
});

// A stand-in screening service: answers /v1/preflight from a function, and records what it was asked.
async function fakeService(answer) {
  const asked = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => { body += c; });
    req.on('end', () => {
      asked.push({ url: req.url, headers: req.headers, body: JSON.parse(body || '{}') });
      const [status, json] = answer(asked.length);
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(json));
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${server.address().port}`, asked, close: () => new Promise((r) => server.close(r)) };
}

test('remote screening: the trial with plain fetch, the stronger decision wins, the selected offer only', async () => {
  const svc = await fakeService(() => [200, { decision: 'block', reasons: ['block: payTo 0x70997970C51812dc3A010C7d01b50e0d17dc79C8 is an OFAC SDN-listed address'] }]);
  try {
    const { client, signer, http } = countingClient();
    guard(http, { remote: true, remoteUrl: svc.url });
    await assert.rejects(payVia(http, challenge(10000)), /OFAC SDN-listed/);
    assert.equal(signer.signs, 0);
    assert.equal(svc.asked[0].url, '/v1/preflight?trial=1');
    assert.equal(svc.asked[0].body.challenge.accepts.length, 1);
    assert.equal(svc.asked[0].body.rules.max_per_payment_usd, 1);
  } finally {
    await svc.close();
  }
});

test('remote screening: allow from the service still obeys the local caps', async () => {
  const svc = await fakeService(() => [200, { decision: 'allow', reasons: ['allow: all rules passed'] }]);
  try {
    const { client, signer, http } = countingClient();
    guard(http, { remote: true, remoteUrl: svc.url, rules: { dailyCapUsd: 0.01 } });
    await payVia(http, challenge(10000));
    await assert.rejects(payVia(http, challenge(10000)), /daily cap/);
    assert.equal(signer.signs, 1);
  } finally {
    await svc.close();
  }
});

test('remote screening failures hold by default, never pay for screening, and onError "allow" waives them', async () => {
  const svc = await fakeService(() => [402, { x402Version: 2, accepts: [] }]);
  try {
    const { client, signer, http } = countingClient();
    guard(http, { remote: true, remoteUrl: svc.url });
    await assert.rejects(payVia(http, challenge(10000)), /hold: remote screening failed: the screening service asked for payment/);
    const down = countingClient();
    guard(down.http, { remote: true, remoteUrl: 'http://127.0.0.1:9' });
    await assert.rejects(payVia(down.http, challenge(10000)), /hold: remote screening failed/);
    const waived = countingClient();
    guard(waived.http, { remote: true, remoteUrl: svc.url, onError: 'allow' });
    await payVia(waived.http, challenge(10000));
    assert.equal(signer.signs + down.signer.signs, 0);
    assert.equal(waived.signer.signs, 1);
  } finally {
    await svc.close();
  }
});

test('feeGuard pays exactly the service wallet, network and asset', async () => {
  const svcPayTo = '0x90F79bf6EB2c4f870365E785982E1f101E93b906';
  const { client, signer, http } = countingClient();
  feeGuard(http, { payTo: svcPayTo, network: 'eip155:8453', serviceUrl: 'https://screen.example' });
  await payVia(http, challenge(10000, { payTo: svcPayTo, url: 'https://screen.example/v1/check' }));
  await assert.rejects(payVia(http, challenge(10000, { url: 'https://screen.example/v1/check' })), /not on allowlist/);
  await assert.rejects(payVia(http, challenge(10000, { payTo: svcPayTo, url: 'https://evil.example/v1/check' })), /not on allowlist/);
  await assert.rejects(payVia(http, challenge(30000, { payTo: svcPayTo, url: 'https://screen.example/v1/check' })), /exceeds max/);
  assert.equal(signer.signs, 1);
});
