// Solana through payguard proxy: the official @x402/svm client (ExactSvmScheme and ExactSvmSchemeV1, inside
// @x402/fetch's x402Client) paying an official seller on Solana devnet terms (x402 v2: @x402/express with
// @x402/svm's ExactSvmScheme server; x402 v1: x402-express on solana-devnet), with a
// loopback stand-in for the Solana RPC the client asks (the mint, a blockhash) and the local facilitator
// checking the transaction as the official SVM facilitator does (lib/solana.mjs), then co-signing it.
//
// Counted where money would move: the facilitator's settlements and the seller's /stats.

import { describe, it, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { AccountRole } from '@solana/kit';
import { fetch as undiciFetch } from 'undici';
import { startFacilitator } from '../lib/facilitator.mjs';
import { startSellerSvm, startSellerSvmV1 } from '../lib/seller-svm.mjs';
import { buy, send } from '../lib/buyer.mjs';
import { newSellerStats } from '../lib/seller-common.mjs';
import { startProxy } from '../lib/payguard.mjs';
import {
  SOLANA_DEVNET, TOKEN_PROGRAM, USDC_DEVNET, addInstruction, altSellerSigner, ata, buyerSigner, startSolanaRpc,
} from '../lib/solana.mjs';

// buyer.mjs imports undici 7, which installs its dispatcher as Node 20's global one; Node 20's own fetch then
// fails on @solana/kit's RPC requests (its explicit content-length header: "invalid content-length header").
// The official client's RPC calls go through the global fetch, so in this process that is undici's own fetch,
// which agrees with its dispatcher.
globalThis.fetch = undiciFetch;

const TOKEN = 'interop-admin-token-0123456789abcdef';
const SANCTIONS_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'testdata', 'ofac');
const USDC_MAINNET = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';

let tmp;
let rpc;
let fac;
let sellers; // {v2, v1}
let guard;
let buyer;

before(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'interop-svm-'));
  // The RPC stand-in knows devnet USDC and, for the changed-mint test, mainnet USDC (both under Token).
  rpc = await startSolanaRpc({
    mints: { [USDC_DEVNET]: { program: TOKEN_PROGRAM, decimals: 6 }, [USDC_MAINNET]: { program: TOKEN_PROGRAM, decimals: 6 } },
  });
  fac = await startFacilitator();
  sellers = { v2: await startSellerSvm({ facilitatorUrl: fac.url }), v1: await startSellerSvmV1({ facilitatorUrl: fac.url }) };
  buyer = await buyerSigner();
  guard = await startProxy({
    dir: path.join(tmp, 'guard'),
    token: TOKEN,
    rules: { max_per_payment_usd: 1, hold_above_usd: 0.25, daily_cap_usd: 25, allowed_networks: [SOLANA_DEVNET] },
    holdWait: '0s',
    args: ['--offline', '--sanctions-dir', SANCTIONS_DIR],
  });
});

after(async () => {
  await guard?.stop();
  await Promise.all([fac?.close(), sellers?.v2.close(), sellers?.v1.close(), rpc?.close()]);
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

beforeEach(async () => {
  await fetch(`${fac.url}/_reset`, { method: 'POST' });
  for (const s of Object.values(sellers)) Object.assign(s.stats(), newSellerStats());
});

const facStats = async () => (await fetch(`${fac.url}/_stats`)).json();
const viaGuard = (url, opts = {}) => buy(url, { proxy: guard.proxyUrl, ca: guard.caPem, svm: { signer: buyer, rpcUrl: rpc.url }, ...opts });

// changeTerms makes the official client build its payment for other terms than the option it accepted:
// the payload's `accepted` (v2) stays the approved option, the signed transaction does something else.
const changeTerms = (change) => (scheme) => ({
  scheme: 'exact',
  createPaymentPayload: (version, req, ctx) => scheme.createPaymentPayload(version, change(req), ctx),
});

// The same flows for both protocol versions: x402 v2 (@x402/express, PAYMENT-SIGNATURE) and v1 (x402-express,
// X-PAYMENT, network solana-devnet: a payload that names neither payee nor asset, bound at its ticket).
const NETWORK = { v2: SOLANA_DEVNET, v1: 'solana-devnet' };

for (const v of ['v2', 'v1']) describe(`Solana ${v}: the official client pays through payguard`, () => {
  it('allowed → paid once, settled by the facilitator, the transfer as approved', async () => {
    const r = await viaGuard(`${sellers[v].url}/cheap`);
    assert.equal(r.error, null, r.error);
    assert.equal(r.status, 200, `${r.status} ${r.body}`);
    assert.deepEqual(r.exchanges.map((e) => e.status), [402, 200]);
    assert.equal(r.headers['x-payguard-decision'], 'allow');
    assert.equal(r.paymentResponse?.success, true);
    assert.equal(r.paymentResponse.network, NETWORK[v]);
    assert.equal(r.paymentHeader.name, v === 'v2' ? 'PAYMENT-SIGNATURE' : 'X-PAYMENT');
    const paid = v === 'v2' ? r.paymentHeader.payload.accepted : r.paymentHeader.payload;
    assert.equal(paid.network, NETWORK[v]);
    if (v === 'v2') assert.equal(paid.asset, USDC_DEVNET);
    assert.ok(rpc.calls.includes('getLatestBlockhash'), `the client asked the stand-in: ${rpc.calls}`);
    const s = await facStats();
    assert.equal(s.settle.success, 1);
    assert.equal(s.settled.length, 1);
    assert.deepEqual(
      { payTo: s.settled[0].payTo, amount: s.settled[0].amount, payer: s.settled[0].payer, asset: s.settled[0].asset },
      { payTo: sellers[v].payTo, amount: '10000', payer: buyer.address, asset: USDC_DEVNET });
    assert.equal(r.paymentResponse.transaction, s.settled[0].transaction, 'the settlement names the co-signed transaction');
    const st = sellers[v].stats();
    assert.equal(st.paymentHeaders, 1);
    assert.equal(st.paid200, 1);
    const budget = await (await fetch(`${guard.adminUrl}/v1/budget`, { headers: { authorization: `Bearer ${TOKEN}` } })).json();
    assert.ok(Number(budget.spent_usd) >= 0.01, JSON.stringify(budget));

    // The same signed payment again, straight to the proxy: a replay, refused before the sellers[v].
    const again = await send(`${sellers[v].url}/cheap`, {
      proxy: guard.proxyUrl, headers: { [r.paymentHeader.name]: r.paymentHeader.value },
    });
    assert.equal(again.status, 403, again.body);
    assert.equal(again.json?.reason_class, 'payment_replay', again.body);
    assert.equal(sellers[v].stats().paymentHeaders, 1);
    assert.equal((await facStats()).settle.calls, 1);
  });

  it('over the cap → refused before the seller, nothing signed or settled', async () => {
    const r = await viaGuard(`${sellers[v].url}/pricey`); // $5, above max_per_payment_usd 1
    assert.equal(r.status, 403, `${r.status} ${r.body}`);
    assert.equal(r.json?.decision, 'block', r.body);
    assert.match(r.json.reasons.join('; '), /exceeds/);
    assert.equal(r.paymentHeader, null, 'the client never signed: it never saw a challenge');
    assert.equal(sellers[v].stats().paymentHeaders, 0);
    const s = await facStats();
    assert.equal(s.verify.calls + s.settle.calls, 0);
  });
});

for (const v of ['v2', 'v1']) describe(`Solana ${v}: a transaction that does other than it names is refused by payguard`, () => {
  const cases = [
    {
      name: 'a changed amount',
      wrap: changeTerms((req) => (req.amount !== undefined
        ? { ...req, amount: String(BigInt(req.amount) + 1n) }
        : { ...req, maxAmountRequired: String(BigInt(req.maxAmountRequired) + 1n) })),
      // v2 names the amount it pays; a v1 payment finds no approval of 10001 units.
      reason: { v2: /moves 10001 atomic units, not the requirement's amount 10000/, v1: /only for the option it passed on in a 402/ },
      facilitatorReason: 'invalid_exact_svm_payload_amount_mismatch',
    },
    {
      name: 'a changed mint',
      wrap: changeTerms((req) => ({ ...req, asset: USDC_MAINNET })),
      reason: { v2: /transfer moves mint EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v/, v1: /only for the option it passed on in a 402/ },
      facilitatorReason: 'invalid_exact_svm_payload_mint_mismatch',
    },
    {
      name: 'a changed destination',
      wrap: changeTerms((req) => ({ ...req, payTo: sellers.v2.altPayTo })),
      reason: /transfer pays token account/,
      facilitatorReason: 'invalid_exact_svm_payload_recipient_mismatch',
    },
    {
      name: 'a second transfer',
      wrap: (scheme) => ({
        scheme: 'exact',
        async createPaymentPayload(version, req, ctx) {
          // Both versions' clients build the same transaction.
          const p = await scheme.createPaymentPayload(version, req, ctx);
          const alt = await ata((await altSellerSigner()).address, req.asset, TOKEN_PROGRAM);
          const transaction = await addInstruction(p.payload.transaction, buyer, (message) => {
            const transfer = message.instructions[2];
            const accounts = [...transfer.accounts];
            accounts[2] = { address: alt, role: AccountRole.WRITABLE };
            return { ...transfer, accounts };
          });
          return { ...p, payload: { transaction } };
        },
      }),
      reason: /after the transfer only Memo is allowed/,
      facilitatorReason: 'invalid_exact_svm_payload_unknown_optional_instruction',
    },
  ];
  for (const c of cases) {
    it(`${c.name}: refused by payguard before the seller`, async () => {
      const r = await viaGuard(`${sellers[v].url}/cheap`, { svm: { signer: buyer, rpcUrl: rpc.url, wrap: c.wrap } });
      assert.equal(r.status, 403, `${r.status} ${r.body}`);
      assert.equal(r.json?.reason_class, 'payment_mismatch', r.body);
      assert.match(r.json.reasons.join('; '), c.reason[v] ?? c.reason);
      assert.deepEqual(r.exchanges.map((e) => e.status), [402, 403]);
      assert.equal(sellers[v].stats().paymentHeaders, 0, 'the payment never reached the seller');
      const s = await facStats();
      assert.equal(s.verify.calls + s.settle.calls, 0);
    });
    // Control: the same payment sent to the seller directly is refused by the facilitator with the official
    // reason, so the local facilitator really checks what payguard checks.
    it(`${c.name}: the facilitator refuses it too (control, no proxy)`, async () => {
      const r = await buy(`${sellers[v].url}/cheap`, { svm: { signer: buyer, rpcUrl: rpc.url, wrap: c.wrap } });
      assert.notEqual(r.status, 200, r.body);
      const s = await facStats();
      assert.equal(s.settle.success, 0);
      assert.equal(s.reasons[c.facilitatorReason], 1, JSON.stringify(s.reasons));
    });
  }

  it('control: the unchanged payment, direct, is verified and settled', async () => {
    const r = await buy(`${sellers[v].url}/cheap`, { svm: { signer: buyer, rpcUrl: rpc.url } });
    assert.equal(r.status, 200, r.body);
    assert.equal((await facStats()).settle.success, 1);
  });
});

// The legacy v1 client (x402-fetch, a Solana signer) builds its own transaction (an estimated compute limit,
// no memo): payguard reads and releases it as exactly as the @x402/svm one.
describe('Solana v1: the legacy x402-fetch client pays through payguard', () => {
  it('allowed → paid once; its replay refused', async () => {
    const r = await viaGuard(`${sellers.v1.url}/cheap`, { version: 1 });
    assert.equal(r.error, null, r.error);
    assert.equal(r.status, 200, `${r.status} ${r.body}`);
    assert.equal(r.paymentHeader.name, 'X-PAYMENT');
    assert.ok(rpc.calls.includes('simulateTransaction'), 'the legacy client estimated its compute limit');
    const s = await facStats();
    assert.equal(s.settle.success, 1);
    assert.deepEqual([s.settled[0].payTo, s.settled[0].amount, s.settled[0].payer], [sellers.v1.payTo, '10000', buyer.address]);
    const again = await send(`${sellers.v1.url}/cheap`, { proxy: guard.proxyUrl, headers: { 'X-PAYMENT': r.paymentHeader.value } });
    assert.equal(again.json?.reason_class, 'payment_replay', again.body);
    assert.equal(sellers.v1.stats().paymentHeaders, 1);
  });

  it('over the cap → refused before anything is signed', async () => {
    const r = await viaGuard(`${sellers.v1.url}/pricey`, { version: 1 });
    assert.equal(r.status, 403, `${r.status} ${r.body}`);
    assert.equal(r.paymentHeader, null);
    assert.equal(sellers.v1.stats().paymentHeaders, 0);
  });
});
