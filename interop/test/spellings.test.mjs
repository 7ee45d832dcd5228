// Header spellings against a real WSGI seller (Python's standard wsgiref server), through the payguard binary:
// a WSGI app reads X_PAYMENT, x_payment and X-PAYMENT alike (PEP 3333's HTTP_X_PAYMENT), so a payment header in
// any spelling must be decided or refused before it leaves payguard, never passed on under a name payguard
// did not judge. Decision headers an agent sends (X-Payguard-*, any spelling) never reach the seller either.

import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { send, encodePayment } from '../lib/buyer.mjs';
import { ALT_PAY_TO, signAuthorization } from '../lib/wallets.mjs';
import { startProxy as startGuard } from '../lib/payguard.mjs';

const LIB = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'lib');
const BASE_USDC = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913';

// startWSGISeller runs lib/wsgi_seller.py with python3 and resolves when it prints its ready line.
function startWSGISeller() {
  const proc = spawn('python3', [path.join(LIB, 'wsgi_seller.py')], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  return new Promise((resolve, reject) => {
    proc.once('error', (err) => reject(new Error(`python3 is needed for the WSGI seller: ${err.message}`)));
    proc.once('exit', (code) => reject(new Error(`wsgi_seller.py exited with ${code}: ${out}`)));
    proc.stderr.on('data', (c) => { out += c; });
    proc.stdout.on('data', (c) => {
      out += c;
      for (const line of out.split('\n')) {
        try {
          const msg = JSON.parse(line);
          if (msg.ready) resolve({ url: msg.url, stop: () => proc.kill('SIGTERM') });
        } catch { /* not a complete line yet */ }
      }
    });
  });
}

// python3 is the one program beyond Go and Node this suite needs (README: the tests need Go and Node). Without it
// the suite is skipped with a notice that cannot be missed, except under CI=true, where it fails (CI installs it).
const havePython = spawnSync('python3', ['--version']).status === 0;
const skip = !havePython && process.env.CI !== 'true'
  ? 'python3 not found: the WSGI seller cannot run (install python3 to run this suite; under CI=true it fails)'
  : false;
if (skip) {
  console.error(`\n${'#'.repeat(78)}\n# SKIPPED interop/test/spellings.test.mjs: ${skip}\n${'#'.repeat(78)}\n`);
}

let tmp;
let seller;
let guard;

before(async () => {
  if (skip) return;
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'interop-spellings-'));
  seller = await startWSGISeller();
  guard = await startGuard({ dir: path.join(tmp, 'guard'), token: 'interop-admin-token-0123456789abcdef',
    rules: { payto_blocklist: [ALT_PAY_TO] } });
});

after(async () => {
  await guard?.stop();
  seller?.stop();
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

// A $900 payment to a blocklisted payee, signed for real (EIP-3009 on Base USDC), as v2 and v1 headers.
async function payments(url) {
  const validBefore = String(Math.floor(Date.now() / 1000) + 60);
  const accepted = { scheme: 'exact', network: 'eip155:8453', amount: '900000000', asset: BASE_USDC, payTo: ALT_PAY_TO,
    maxTimeoutSeconds: 60, extra: { name: 'USD Coin', version: '2' } };
  const v2 = encodePayment({ x402Version: 2, resource: { url }, accepted,
    payload: await signAuthorization({ chainId: 8453, to: ALT_PAY_TO, value: '900000000', validBefore }) });
  const v1 = encodePayment({ x402Version: 1, scheme: 'exact', network: 'base',
    payload: await signAuthorization({ chainId: 8453, to: ALT_PAY_TO, value: '900000000', validBefore }) });
  return { v1, v2 };
}

describe('payment header spellings, WSGI seller', { skip }, () => {
  it('refuses every spelling a WSGI app reads as a payment header, and blocks the canonical one', async () => {
    const url = `${seller.url}/report`;
    const { v1, v2 } = await payments(url);
    for (const [name, value, canonical] of [
      ['X_PAYMENT', v1, false], ['x_payment', v1, false], ['X-PAYMENT-', v1, false], ['X_PAYMENT_', v1, false],
      ['PAYMENT_SIGNATURE', v2, false], ['Payment_Signature', v2, false], ['PAYMENT-SIGNATURE-', v2, false],
      ['PAYMENT-SIGNATURE', v2, true], ['payment-signature', v2, true],
    ]) {
      const r = await send(url, { proxy: guard.proxyUrl, headers: { [name]: value } });
      assert.equal(r.status, 403, `${name}: ${r.status} ${r.body}`);
      assert.equal(r.json?.decision, 'block', `${name}: ${r.body}`);
      const spelled = r.json.reasons.some((x) => x.includes('non-canonical spelling'));
      assert.equal(spelled, !canonical, `${name}: ${r.json.reasons}`);
    }
    const stats = await (await fetch(`${seller.url}/stats`)).json();
    assert.deepEqual(stats.payments, [], 'the WSGI seller read a payment header');
  });

  it('never passes the agent\'s X-Payguard-* headers to the seller', async () => {
    const r = await send(`${seller.url}/free`, { proxy: guard.proxyUrl,
      headers: { 'X-Payguard-Decision': 'allow', 'x_payguard_receipt': 'rcpt_forged' } });
    assert.equal(r.status, 200, r.body);
    const stats = await (await fetch(`${seller.url}/stats`)).json();
    assert.deepEqual(stats.payguard, []);
  });
});
