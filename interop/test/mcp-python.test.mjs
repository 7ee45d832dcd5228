// x402 over MCP through payguard proxy, with real peers: the official PyPI x402 MCP buyer (x402.mcp's
// x402MCPSession over the official MCP Python SDK's Streamable HTTP client, HTTP_PROXY pointing at payguard)
// against (a) payguard serve's /mcp (JSON answers) and (b) an MCP server built with the official x402.mcp
// server helpers on FastMCP (event-stream answers), both settling through the local facilitator, which
// counts every verify and settle. And the Python guard (clients/python) in the same buyer's payment path.
//
// Python peers run in interop/.venv (scripts/interop-python.sh, pinned interop/python/requirements.txt).
// Without python3 or PyPI the suite is skipped with a loud notice, except under CI=true, where it fails.

import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startFacilitator } from '../lib/facilitator.mjs';
import { REPO_ROOT, adminClient, freePort, serveYAML, startPayguard, startProxy } from '../lib/payguard.mjs';
import { SELLER_PAY_TO } from '../lib/wallets.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const PYDIR = path.join(HERE, '..', 'python');
const SANCTIONS_DIR = path.join(HERE, '..', 'testdata', 'ofac');
// Both peers listen on 127.0.0.1 and the proxy's Index keeps one payee history per site (hold_on_payto_change):
// they are paid to the same address, so neither looks like the other's payee change.
const SERVICE_PAY_TO = SELLER_PAY_TO;
const TOKEN = 'interop-mcp-python-token-0123456789';
const WALLET = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';

const setup = spawnSync(path.join(REPO_ROOT, 'scripts', 'interop-python.sh'), ['--setup'], { encoding: 'utf8' });
const PY = setup.status === 0 ? setup.stdout.trim().split('\n').pop() : null;
const skip = PY ? false : `the Python peers could not be set up: ${setup.stderr?.trim().split('\n').pop() ?? setup.error}`;
if (skip && process.env.CI === 'true') throw new Error(skip);
if (skip) console.error(`\n${'#'.repeat(78)}\n# SKIPPED interop/test/mcp-python.test.mjs: ${skip}\n${'#'.repeat(78)}\n`);

let tmp, fac, api, seller, sseSeller, guard, holdGuard;

/** startPySeller runs the x402.mcp server helpers' MCP server and resolves once it listens. */
function startPySeller(facilitatorUrl, transport = 'streamable') {
  const proc = spawn(PY, [path.join(PYDIR, 'x402_mcp_seller.py'), '--facilitator', facilitatorUrl, '--pay-to', SELLER_PAY_TO,
    '--transport', transport],
    { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  return new Promise((resolve, reject) => {
    proc.once('exit', (code) => reject(new Error(`x402_mcp_seller.py exited with ${code}: ${out}`)));
    proc.stderr.on('data', (c) => { out += c; });
    proc.stdout.on('data', (c) => {
      out += c;
      const m = /ready (\d+)/.exec(out);
      if (m) resolve({ url: `http://127.0.0.1:${m[1]}${transport === 'sse' ? '' : '/mcp'}`, stop: () => proc.kill('SIGTERM') });
    });
  });
}

/** buy runs the official Python buyer (x402_mcp_buyer.py) through proxy (or directly with proxy null). */
function buy(proxy, url, tool, args, { mode = 'pay', guardRules, approveHolds, sse } = {}) {
  const argv = [path.join(PYDIR, 'x402_mcp_buyer.py'), url, tool, '--args', JSON.stringify(args), '--mode', mode];
  if (guardRules) argv.push('--guard', JSON.stringify(guardRules));
  if (approveHolds) argv.push('--approve-holds');
  if (sse) argv.push('--sse');
  const env = { ...process.env, HTTP_PROXY: proxy ?? '', http_proxy: proxy ?? '', NO_PROXY: '', no_proxy: '' };
  if (!proxy) { delete env.HTTP_PROXY; delete env.http_proxy; }
  return new Promise((resolve, reject) => {
    const p = spawn(PY, argv, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '', err = '';
    p.stdout.on('data', (c) => { out += c; });
    p.stderr.on('data', (c) => { err += c; });
    p.once('exit', (code) => {
      const line = out.trim().split('\n').pop();
      try {
        resolve(JSON.parse(line));
      } catch {
        reject(new Error(`buyer exited ${code}: ${out}\n${err}`));
      }
    });
  });
}

const stats = async () => (await fetch(`${fac.url}/_stats`)).json();
const counts = async () => { const s = await stats(); return { verify: s.verify.calls, settle: s.settle.calls }; };

before(async () => {
  if (skip) return;
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'interop-mcp-python-'));
  fac = await startFacilitator();
  // payguard serve with its free trial off: every call of a paid tool asks for payment.
  const listenAddr = `127.0.0.1:${await freePort()}`;
  const serveDir = path.join(tmp, 'serve');
  fs.mkdirSync(serveDir, { recursive: true });
  const yaml = serveYAML({ listenAddr, dataDir: serveDir, payTo: SERVICE_PAY_TO, facilitatorUrl: fac.url })
    .replace('server:\n', 'server:\n  trial_limit: 0\n');
  const run = await startPayguard({ mode: 'serve', yaml, dir: serveDir, waitFor: [listenAddr],
    args: ['--offline', '--sanctions-dir', SANCTIONS_DIR] });
  api = { url: `http://${listenAddr}`, stop: run.stop };
  seller = await startPySeller(fac.url);
  sseSeller = await startPySeller(fac.url, 'sse');
  // $0.01 allowed, $0.012 held (above $0.011), $0.02 blocked (above the $0.015 maximum).
  guard = await startProxy({ dir: path.join(tmp, 'guard'), token: TOKEN,
    rules: { max_per_payment_usd: 0.015, hold_above_usd: 0.011 }, args: ['--offline', '--sanctions-dir', SANCTIONS_DIR] });
  // serve's prices are $0.005, $0.01 and $0.02: a second proxy holds check_payee's $0.01.
  holdGuard = await startProxy({ dir: path.join(tmp, 'hold'), token: TOKEN,
    rules: { hold_above_usd: 0.005 }, args: ['--offline', '--sanctions-dir', SANCTIONS_DIR] });
});

after(async () => {
  await guard?.stop();
  await holdGuard?.stop();
  seller?.stop();
  sseSeller?.stop();
  await api?.stop();
  await fac?.close();
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

const peers = () => [
  { name: 'payguard serve /mcp', url: `${api.url}/mcp`, allowed: ['check_payee', { wallet: WALLET }],
    over: ['preflight_payment', { cart: { merchant_domain: 'example.com', total_usd: 0.1, pay_to: WALLET } }] },
  { name: 'x402.mcp server helpers (FastMCP)', url: seller.url, allowed: ['weather', { city: 'sf' }],
    over: ['premium', { city: 'sf' }], held: ['forecast', { city: 'sf' }] },
];

describe('the official Python x402 MCP buyer through payguard proxy', { skip }, () => {
  for (const i of [0, 1]) {
    describe(`against ${i === 0 ? 'payguard serve /mcp' : 'the x402.mcp server helpers'}`, () => {
      it('allowed: paid and settled once, the spend committed from _meta', async () => {
        const peer = peers()[i];
        const admin = adminClient(guard.adminUrl, TOKEN);
        const before = await counts();
        const b0 = (await admin.budget()).json;
        const r = await buy(guard.proxyUrl, peer.url, ...peer.allowed);
        assert.equal(r.is_error, false, JSON.stringify(r));
        assert.equal(r.payment_made, true);
        assert.equal(r.payment_response?.success, true, JSON.stringify(r));
        assert.deepEqual(await counts(), { verify: before.verify + 1, settle: before.settle + 1 });
        const b = (await admin.budget()).json;
        // Committed, not left reserved (an earlier test's refused forgery may still hold its own reservation
        // until its ticket expires).
        assert.equal(b.spent_micros - b0.spent_micros, 10000, JSON.stringify(b));
        assert.equal(b.reserved_micros, b0.reserved_micros, JSON.stringify(b));
      });

      it('over the cap: no verify, no settle, a refusal the buyer can read', async () => {
        const peer = peers()[i];
        const before = await counts();
        const r = await buy(guard.proxyUrl, peer.url, ...peer.over);
        assert.equal(r.is_error, true, JSON.stringify(r));
        assert.equal(r.payment_made, false, JSON.stringify(r));
        assert.equal(r.structured?.decision, 'block', JSON.stringify(r));
        assert.ok(r.structured.reasons.some((x) => x.includes('exceeds')), JSON.stringify(r.structured.reasons));
        assert.ok(r.structured.receipt?.jws, 'the refusal carries the signed receipt');
        assert.deepEqual(await counts(), before);
      });

      it('a held payment approved through the admin API is paid once', async () => {
        const peer = peers()[i];
        const proxy = i === 0 ? holdGuard : guard;
        const held = i === 0 ? peer.allowed : peer.held;
        const admin = adminClient(proxy.adminUrl, TOKEN);
        const before = await counts();
        const first = await buy(proxy.proxyUrl, peer.url, ...held);
        assert.equal(first.structured?.decision, 'hold', JSON.stringify(first));
        const id = first.structured.hold.id;
        const h = (await admin.hold(id)).json;
        assert.match(h.url, new RegExp(`^mcp://127\\.0\\.0\\.1:\\d+/tool/${held[0]}$`), JSON.stringify(h));
        assert.deepEqual(await counts(), before, 'nothing verified while held');
        assert.equal((await admin.approve(id)).status, 200);
        const paid = await buy(proxy.proxyUrl, peer.url, ...held);
        assert.equal(paid.payment_made, true, JSON.stringify(paid));
        assert.equal(paid.payment_response?.success, true, JSON.stringify(paid));
        assert.deepEqual(await counts(), { verify: before.verify + 1, settle: before.settle + 1 });
        assert.equal((await admin.hold(id)).json.status, 'used');
        const again = await buy(proxy.proxyUrl, peer.url, ...held);
        assert.equal(again.payment_made, false, `the approval was used once: ${JSON.stringify(again)}`);
      });

      it('a replayed _meta payment is refused before the seller', async () => {
        const peer = peers()[i];
        const before = await counts();
        const r = await buy(guard.proxyUrl, peer.url, ...peer.allowed, { mode: 'replay' });
        assert.equal(r.first_paid?.is_error, false, JSON.stringify(r));
        assert.match(r.replayed?.error ?? '', /replay/, JSON.stringify(r));
        assert.deepEqual(await counts(), { verify: before.verify + 1, settle: before.settle + 1 });
      });

      it('a forged _meta payment (recipient changed after the decision) is refused before the seller', async () => {
        const peer = peers()[i];
        const before = await counts();
        const r = await buy(guard.proxyUrl, peer.url, ...peer.allowed, { mode: 'forge' });
        assert.match(r.first_paid?.error ?? '', /transfer to/, JSON.stringify(r));
        assert.deepEqual(await counts(), before);
      });
    });
  }
});

describe('x402.mcp\'s create_x402_mcp_client (HTTP+SSE: answers on the GET stream) through payguard proxy', { skip }, () => {
  it('allowed: paid and settled once', async () => {
    const before = await counts();
    const r = await buy(guard.proxyUrl, sseSeller.url, 'weather', { city: 'sf' }, { sse: true });
    assert.equal(r.payment_made, true, JSON.stringify(r));
    assert.equal(r.payment_response?.success, true, JSON.stringify(r));
    assert.deepEqual(await counts(), { verify: before.verify + 1, settle: before.settle + 1 });
  });

  it('over the cap: no verify, no settle, the refusal on the stream', async () => {
    const before = await counts();
    const r = await buy(guard.proxyUrl, sseSeller.url, 'premium', { city: 'sf' }, { sse: true });
    assert.equal(r.payment_made, false, JSON.stringify(r));
    assert.equal(r.structured?.decision, 'block', JSON.stringify(r));
    assert.deepEqual(await counts(), before);
  });
});

describe('the Python guard in the official x402 MCP buyer\'s payment path', { skip }, () => {
  // x402MCPSession pays through x402Client.create_payment_payload, whose before-payment-creation hook is
  // where the guard decides. It sees the terms, not the MCP server's host: a bare client's guard holds with
  // "could not determine merchant domain" (its caps and lists still block), and pays only when on_hold says yes.
  const rules = { screen_sanctions: false };

  it('blocks over its maximum before signing: no verify, no settle (no proxy at all)', async () => {
    const before = await counts();
    const r = await buy(null, seller.url, 'weather', { city: 'sf' },
      { guardRules: { ...rules, max_per_payment_usd: 0.005 }, approveHolds: true });
    assert.match(r.raised ?? '', /payguard: block: amount \$0\.01 exceeds max \$0\.005/, JSON.stringify(r));
    assert.deepEqual(r.guard_decisions, ['block'], JSON.stringify(r));
    assert.deepEqual(await counts(), before);
  });

  it('holds without an approver: nothing signed', async () => {
    const before = await counts();
    const r = await buy(null, seller.url, 'weather', { city: 'sf' }, { guardRules: rules });
    assert.match(r.raised ?? '', /payguard: hold/, JSON.stringify(r));
    assert.deepEqual(await counts(), before);
  });

  it('a hold its on_hold approves is paid once', async () => {
    const before = await counts();
    const r = await buy(null, seller.url, 'weather', { city: 'sf' }, { guardRules: rules, approveHolds: true });
    assert.equal(r.payment_made, true, JSON.stringify(r));
    assert.equal(r.payment_response?.success, true, JSON.stringify(r));
    assert.deepEqual(await counts(), { verify: before.verify + 1, settle: before.settle + 1 });
  });
});
