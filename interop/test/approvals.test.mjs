// The approver's side of payguard proxy with the official buyer: an agent (@x402/fetch, over MITM'd HTTPS)
// whose held request gave up before anyone answered is paid on its retry once a person approves; the
// webhook receiver (this file, verifying with node:crypto, not payguard's code) gets the signed hold events.

import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { fetch as undiciFetch } from 'undici';
import { startFacilitator } from '../lib/facilitator.mjs';
import { startSellerV2 } from '../lib/seller-v2.mjs';
import { buy, makeDispatcher } from '../lib/buyer.mjs';
import { makeTestPKI } from '../lib/tls.mjs';
import { SELLER_PAY_TO } from '../lib/wallets.mjs';
import { adminClient, startProxy } from '../lib/payguard.mjs';

const TOKEN = 'interop-approvals-token-0123456789';
const SECRET = 'whsec-interop-0123456789';
const SANCTIONS_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'testdata', 'ofac');

let tmp, pki, fac, seller, guard, hook;

// startReceiver is a webhook receiver that keeps every delivery and checks its signature the way a
// receiver would: HMAC-SHA256 over "<t>.<body>" with the shared secret, t within five minutes.
function startReceiver() {
  const events = [];
  const waiters = [];
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const sig = Object.fromEntries((req.headers['x-payguard-signature'] ?? '').split(',').map((kv) => kv.split('=')));
      const want = crypto.createHmac('sha256', SECRET).update(`${sig.t}.`).update(body).digest('hex');
      const fresh = Math.abs(Date.now() / 1000 - Number(sig.t)) < 300;
      const verified = !!sig.v1 && fresh && crypto.timingSafeEqual(Buffer.from(sig.v1, 'hex'), Buffer.from(want, 'hex'));
      const ev = { verified, headers: req.headers, json: JSON.parse(body.toString('utf8')) };
      events.push(ev);
      for (const w of waiters.splice(0)) w();
      res.writeHead(204).end();
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({
    url: `http://127.0.0.1:${server.address().port}/hook`,
    events,
    // next resolves to the first event of type typ (waiting for it if needed).
    async next(typ) {
      for (;;) {
        const ev = events.find((e) => e.json.type === typ);
        if (ev) return ev;
        await new Promise((r) => waiters.push(r));
      }
    },
    close: () => new Promise((r) => server.close(r)),
  })));
}

before(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'interop-approvals-'));
  pki = makeTestPKI(path.join(tmp, 'upstream-pki'));
  fac = await startFacilitator();
  seller = await startSellerV2({ facilitatorUrl: fac.url, network: 'base', tls: pki });
  hook = await startReceiver();
  guard = await startProxy({
    dir: path.join(tmp, 'guard'), token: TOKEN, upstreamCAFiles: [pki.caFile],
    rules: { hold_above_usd: 0.25 }, holdWait: '60s',
    adminYAML: ['  notify:', '    webhooks:', '      - url_env: PG_INTEROP_HOOK_URL', '        secret_env: PG_INTEROP_HOOK_SECRET'].join('\n'),
    env: { PG_INTEROP_HOOK_URL: hook.url, PG_INTEROP_HOOK_SECRET: SECRET },
    args: ['--offline', '--sanctions-dir', SANCTIONS_DIR],
  });
});

after(async () => {
  await guard?.stop();
  await Promise.all([fac?.close(), seller?.close(), hook?.close()]);
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

describe('an approval outlives hold_wait and the request that waited for it', () => {
  it('the agent gives up, a person approves later, the official buyer\'s retry is paid once', async () => {
    const admin = adminClient(guard.adminUrl, TOKEN);
    const url = `${seller.url}/mid`; // $0.50: above hold_above_usd

    // The agent's first request waits on the hold (hold_wait 60 s); the agent gives up on it.
    const d = makeDispatcher({ proxy: guard.proxyUrl, ca: guard.caPem });
    const ac = new AbortController();
    const abandoned = undiciFetch(url, { dispatcher: d, signal: ac.signal }).then(() => 'answered', (e) => e.name);
    const created = await hook.next('hold.created');
    ac.abort();
    assert.equal(await abandoned, 'AbortError');
    await d.destroy();

    // The webhook: signed, and carrying what a person needs.
    const ev = created.json;
    assert.ok(created.verified, 'the signature verifies with node:crypto');
    assert.equal(created.headers['x-payguard-event'], 'hold.created');
    assert.equal(ev.hold.url, url);
    assert.equal(ev.hold.amount_atomic, '500000');
    assert.equal(ev.hold.network, 'eip155:8453');
    assert.equal(ev.hold.pay_to.toLowerCase(), SELLER_PAY_TO.toLowerCase());
    assert.match(ev.hold.reasons[0], /^hold: amount .*above hold threshold/);
    assert.equal(ev.hold.screening.sanctions.status, 'clear');
    assert.equal(ev.budget.cap_usd !== undefined, true);
    assert.equal(ev.approve_url, `${guard.adminUrl}/#hold=${ev.hold.id}`);
    assert.match(ev.text, /held for approval/);

    // A person approves after the agent has gone.
    const ok = await admin.approve(ev.hold.id, { by: 'alice', note: 'interop' });
    assert.equal(ok.status, 200, ok.text);
    const approved = await hook.next('hold.approved');
    assert.ok(approved.verified);
    assert.equal(approved.json.hold.resolved_by, 'alice');

    // The agent's retry of the same request, by the official buyer: released on the approval and paid.
    const retry = await buy(url, { version: 2, proxy: guard.proxyUrl, ca: guard.caPem });
    assert.equal(retry.status, 200, retry.body || retry.error);
    assert.equal(retry.paymentResponse?.success, true);
    assert.equal(retry.headers['x-payguard-hold'], undefined, 'the paid response is the seller\'s');
    assert.equal(seller.stats().paid200, 1);
    const s = await (await fetch(`${fac.url}/_stats`)).json();
    assert.equal(s.settle.success, 1);
    assert.equal(s.settled[0].amount, '500000');
    assert.equal((await admin.hold(ev.hold.id)).json.status, 'used');
    const metrics = await (await fetch(`${guard.adminUrl}/metrics`)).text();
    const sent = Number(/payguard_notify_events_total\{result="sent"\} (\d+)/.exec(metrics)?.[1]);
    assert.ok(sent >= 2, `payguard_notify_events_total{result="sent"} = ${sent}`);
  });

  it('the console is served on the admin listener with a strict CSP', async () => {
    const res = await fetch(`${guard.adminUrl}/`);
    assert.equal(res.status, 200);
    const csp = res.headers.get('content-security-policy');
    assert.match(csp, /default-src 'none'/);
    assert.match(csp, /script-src 'self'/);
    assert.doesNotMatch(csp, /unsafe-inline/);
    assert.match(await res.text(), /payguard approvals/);
  });
});
