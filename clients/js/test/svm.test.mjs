// The guard in an official client that pays on Solana: @x402/fetch's x402Client with @x402/svm's
// ExactSvmScheme (from the interop harness, whose packages live in interop/node_modules), paying the
// official @x402/express Solana devnet seller through the local facilitator, with the loopback RPC stand-in.
// A Solana option is judged as an EVM one is: the devnet USDC mint priced as USDC, the per-payment cap,
// payee lists compared exactly (Base58 is case-sensitive).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { wrapFetchWithPayment, x402Client, x402HTTPClient } from '@x402/fetch';
import { wrapFetchWithPayment as wrapFetchV1 } from 'x402-fetch';
import { startFacilitator } from '../../../interop/lib/facilitator.mjs';
import { startSellerSvm, startSellerSvmV1 } from '../../../interop/lib/seller-svm.mjs';
import { SOLANA_DEVNET, buyerSigner, startSolanaRpc, svmClientScheme } from '../../../interop/lib/solana.mjs';
import { createGuard, guardV1Fetch } from '../src/index.js';

let fac, seller, sellerV1, rpc, signer;
before(async () => {
  rpc = await startSolanaRpc();
  fac = await startFacilitator();
  seller = await startSellerSvm({ facilitatorUrl: fac.url });
  sellerV1 = await startSellerSvmV1({ facilitatorUrl: fac.url });
  signer = await buyerSigner();
});
after(async () => {
  await seller?.close();
  await sellerV1?.close();
  await fac?.close();
  await rpc?.close();
});

const facStats = async () => (await fetch(`${fac.url}/_stats`)).json();
const reset = async () => { await fetch(`${fac.url}/_reset`, { method: 'POST' }); };

function buyer(rules) {
  const client = new x402Client().setSpendControls(false);
  client.register('solana:*', svmClientScheme(signer, rpc.url));
  const g = createGuard({ rules: { screenSanctions: false, allowedNetworks: [SOLANA_DEVNET], ...rules } });
  const http = g.attach(new x402HTTPClient(client)); // the HTTP client carries the request URL to the guard
  const decisions = [];
  g.options.onDecision = (d) => decisions.push(d);
  return { pay: wrapFetchWithPayment(fetch, http), guard: g, decisions };
}

// swapCase turns a Base58 payee into another (valid-looking) string: the same letters in the other case.
const swapCase = (s) => [...s].map((c) => (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase())).join('');

test('solana: an allowed payment is signed and settles; the mint is priced as USDC', async () => {
  await reset();
  const { pay, guard, decisions } = buyer({});
  const res = await pay(`${seller.url}/cheap`);
  assert.equal(res.status, 200, await res.text());
  assert.deepEqual(decisions.map((d) => [d.decision, Number(d.amountMicros)]), [['allow', 10000]]);
  const s = await facStats();
  assert.equal(s.settle.success, 1);
  assert.equal(s.settled[0].payTo, seller.payTo);
  assert.equal(guard.spent().spentUsd, '0.01');
});

test('solana: over the cap, the guard refuses before anything is signed', async () => {
  await reset();
  const { pay, decisions } = buyer({ maxPerPaymentUsd: 1 });
  await assert.rejects(pay(`${seller.url}/pricey`), /payguard: block: .*exceeds/);
  assert.equal(decisions[0].decision, 'block');
  assert.equal(seller.stats().byPath['/pricey']?.paymentHeaders ?? 0, 0);
  const s = await facStats();
  assert.equal(s.verify.calls + s.settle.calls, 0);
});

test('solana: payee lists compare exactly (Base58 is case-sensitive)', async () => {
  await reset();
  const blocked = buyer({ paytoBlocklist: [seller.payTo] });
  await assert.rejects(blocked.pay(`${seller.url}/cheap`), /payguard: block: .*payTo .* is on blocklist/);
  // The same letters in the other case are another key: not the blocklisted payee.
  const other = buyer({ paytoBlocklist: [swapCase(seller.payTo)] });
  const res = await other.pay(`${seller.url}/cheap`);
  assert.equal(res.status, 200);
  // A strict allowlist holding only the case-swapped spelling does not approve the real payee.
  const strict = buyer({ strictAllowlist: true, paytoAllowlist: [swapCase(seller.payTo)] });
  await assert.rejects(strict.pay(`${seller.url}/cheap`), /payguard: hold: .*payTo .* not on allowlist/);
  assert.equal((await facStats()).settle.success, 1);
});

// The v1 guard sees the signed payment itself (x402-fetch has no hooks): a Solana transaction is let out only
// if it pays exactly the approved option (src/svm.js). The legacy x402-fetch client signs with a Solana signer.
test('solana v1: guardV1Fetch lets the legacy client\'s exact payment out once, and nothing else', async () => {
  await reset();
  const rules = { screenSanctions: false, allowedNetworks: ['solana-devnet'] };
  const svmConfig = { svmConfig: { rpcUrl: rpc.url } };
  const pay = wrapFetchV1(guardV1Fetch(fetch, { rules }), signer, 10n ** 9n, undefined, svmConfig);
  const res = await pay(`${sellerV1.url}/cheap`);
  assert.equal(res.status, 200, await res.text());
  let s = await facStats();
  assert.equal(s.settle.success, 1);
  assert.equal(s.settled[0].payTo, sellerV1.payTo);
  assert.equal(s.settled[0].amount, '10000');

  // A client that signs more than it was shown (the legacy client building for a higher amount): the guard
  // refuses the payment before it leaves.
  const seen = [];
  const inner = async (input, init) => {
    const hdr = new Headers(init?.headers ?? {}).get('x-payment');
    if (hdr) seen.push(hdr);
    return fetch(input, init);
  };
  const guarded = guardV1Fetch(inner, { rules });
  const overpaying = async (input, init) => {
    const res = await guarded(input, init);
    if (res.status !== 402) return res;
    const body = await res.json(); // raise the amount the client signs, after the guard approved 10000
    body.accepts[0].maxAmountRequired = '20000';
    return new Response(JSON.stringify(body), { status: 402, headers: { 'content-type': 'application/json' } });
  };
  const res2 = await wrapFetchV1(overpaying, signer, 10n ** 9n, undefined, svmConfig)(`${sellerV1.url}/cheap`);
  assert.equal(res2.status, 403);
  assert.match((await res2.json()).reasons.join('; '), /does not match the option payguard approved/);
  assert.equal(seen.length, 0, 'the payment never reached the seller');
  s = await facStats();
  assert.equal(s.verify.calls, 1, 'only the first payment was verified');
});
