// Real peers for the upto scheme: @x402/evm's upto client (x402Client + UptoEvmScheme) wrapped in the guard
// pays the interop harness's @x402/express upto seller through its local facilitator. The guard judges the
// maximum the client would authorize, before anything is signed, exactly as the Go engine does (the
// decision vectors hold both to it).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { wrapFetchWithPayment, x402Client, x402HTTPClient } from '@x402/fetch';
import { UptoEvmScheme } from '@x402/evm/upto/client';
import { privateKeyToAccount } from 'viem/accounts';
import { startFacilitator } from '../../../interop/lib/facilitator.mjs';
import { startSellerUpto } from '../../../interop/lib/seller-upto.mjs';
import { BUYER_KEY } from '../../../interop/lib/wallets.mjs';
import { createGuard } from '../src/index.js';

const LOCAL = { screenSanctions: false }; // no sanctions list in process: acknowledged explicitly
let fac, seller;

before(async () => {
  fac = await startFacilitator();
  seller = await startSellerUpto({ facilitatorUrl: fac.url });
});
after(async () => {
  await seller?.close();
  await fac?.close();
});

const facStats = async () => (await fetch(`${fac.url}/_stats`)).json();

function buyer(options) {
  const client = new x402Client().setSpendControls(false);
  client.register('eip155:*', new UptoEvmScheme(privateKeyToAccount(BUYER_KEY)));
  const g = createGuard(options);
  const http = g.attach(new x402HTTPClient(client)); // the HTTP client carries the request URL to the guard
  return { pay: wrapFetchWithPayment(fetch, http), guard: g };
}

test('upto: a maximum under the caps is paid; the guard reserves the maximum it let the client sign', async () => {
  await fetch(`${fac.url}/_reset`, { method: 'POST' });
  const { pay, guard } = buyer({ rules: LOCAL });
  const res = await pay(`${seller.url}/metered?usage=70000`);
  assert.equal(res.status, 200);
  const s = await facStats();
  assert.deepEqual(s.settled.map((x) => [x.scheme, x.maximum, x.amount]), [['upto', '200000', '70000']]);
  // In process the guard does not read the settlement: it keeps the authorized maximum (SPEC §12.3).
  assert.equal(guard.spent().spentUsd, '0.2');
});

test('upto: a maximum over the per-payment cap is refused before signing; the facilitator sees nothing', async () => {
  await fetch(`${fac.url}/_reset`, { method: 'POST' });
  const before = seller.stats().paymentHeaders;
  const { pay, guard } = buyer({ rules: LOCAL });
  await assert.rejects(pay(`${seller.url}/metered-pricey`), /block: upto maximum \$5 exceeds max \$1/);
  const s = await facStats();
  assert.equal(s.verify.calls + s.settle.calls, 0);
  assert.equal(seller.stats().paymentHeaders, before);
  assert.equal(guard.spent().spentUsd, '0');
});
