// The guard in an official client that pays on Solana: @x402/fetch's x402Client with @x402/svm's
// ExactSvmScheme (from the interop harness, whose packages live in interop/node_modules), paying the
// official @x402/express Solana devnet seller through the local facilitator, with the loopback RPC stand-in.
// A Solana option is judged as an EVM one is: the devnet USDC mint priced as USDC, the per-payment cap,
// payee lists compared exactly (Base58 is case-sensitive).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { startFacilitator } from '../../../interop/lib/facilitator.mjs';
import { startSellerSvm } from '../../../interop/lib/seller-svm.mjs';
import { SOLANA_DEVNET, buyerSigner, startSolanaRpc, svmClientScheme } from '../../../interop/lib/solana.mjs';
import { createGuard } from '../src/index.js';

let fac, seller, rpc, signer;
before(async () => {
  rpc = await startSolanaRpc();
  fac = await startFacilitator();
  seller = await startSellerSvm({ facilitatorUrl: fac.url });
  signer = await buyerSigner();
});
after(async () => {
  await seller?.close();
  await fac?.close();
  await rpc?.close();
});

const facStats = async () => (await fetch(`${fac.url}/_stats`)).json();
const reset = async () => { await fetch(`${fac.url}/_reset`, { method: 'POST' }); };

function buyer(rules) {
  const client = new x402Client().setSpendControls(false);
  client.register('solana:*', svmClientScheme(signer, rpc.url));
  const g = createGuard({ rules: { screenSanctions: false, allowedNetworks: [SOLANA_DEVNET], ...rules } });
  g.attach(client);
  const decisions = [];
  g.options.onDecision = (d) => decisions.push(d);
  return { pay: wrapFetchWithPayment(fetch, client), guard: g, decisions };
}

// swapCase turns a Base58 payee into another (valid-looking) string: the same letters in the other case.
const swapCase = (s) => [...s].map((c) => (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase())).join('');

test('solana: an allowed payment is signed and settles; the mint is priced as USDC', async () => {
  await reset();
  const { pay, guard, decisions } = buyer({});
  const res = await pay(`${seller.url}/cheap`);
  assert.equal(res.status, 200, await res.text());
  assert.deepEqual(decisions.map((d) => [d.decision, d.amountMicros]), [['allow', 10000n]]);
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
