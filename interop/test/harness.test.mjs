// Proves the harness itself, with no payguard in the path: the official buyers pay the official sellers
// through the local facilitator, and the facilitator refuses what it must (tampered, replayed, expired,
// mis-addressed and mis-priced payments).

import { describe, it, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startFacilitator } from '../lib/facilitator.mjs';
import { startSellerV2 } from '../lib/seller-v2.mjs';
import { startSellerV1 } from '../lib/seller-v1.mjs';
import { buy, send, encodePayment } from '../lib/buyer.mjs';
import { makeTestPKI } from '../lib/tls.mjs';
import { ALT_PAY_TO, BUYER_ADDRESS, SELLER_PAY_TO, signAuthorization } from '../lib/wallets.mjs';
import { extractOffersFromPaymentRequired, verifyOfferSignatureEIP712, verifyReceiptSignatureEIP712 } from '@x402/extensions/offer-receipt';
import { USDC } from '../lib/networks.mjs';

let fac;
let v2; // @x402/express on Base (eip155:8453)
let v1; // x402-express on base-sepolia
let pki;
let tmp;

before(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'interop-harness-'));
  pki = makeTestPKI(path.join(tmp, 'pki'));
  fac = await startFacilitator();
  v2 = await startSellerV2({ facilitatorUrl: fac.url, network: 'base' });
  v1 = await startSellerV1({ facilitatorUrl: fac.url, network: 'base-sepolia' });
});

after(async () => {
  await Promise.all([v2?.close(), v1?.close(), fac?.close()]);
  fs.rmSync(tmp, { recursive: true, force: true });
});

async function resetAll() {
  await fetch(`${fac.url}/_reset`, { method: 'POST' });
  await fetch(`${v2.url}/stats/reset`, { method: 'POST' });
  await fetch(`${v1.url}/stats/reset`, { method: 'POST' });
}

const facStats = async () => (await fetch(`${fac.url}/_stats`)).json();

describe('paid requests, direct (no proxy)', () => {
  beforeEach(resetAll);

  it('v2 buyer → v2 seller: 200 with a successful PAYMENT-RESPONSE, settled once', async () => {
    const r = await buy(`${v2.url}/cheap`, { version: 2 });
    assert.equal(r.error, null);
    assert.equal(r.status, 200, r.body);
    assert.deepEqual(r.exchanges.map((e) => e.status), [402, 200]);
    assert.equal(r.paymentHeader.name, 'PAYMENT-SIGNATURE');
    assert.ok(r.headers['payment-response'], 'PAYMENT-RESPONSE header present');
    assert.equal(r.paymentResponse.success, true);
    assert.equal(r.paymentResponse.network, 'eip155:8453');
    assert.equal(r.paymentResponse.payer, BUYER_ADDRESS);
    assert.match(r.paymentResponse.transaction, /^0x[0-9a-f]{64}$/);
    const s = await facStats();
    assert.equal(s.settle.success, 1);
    assert.deepEqual(
      { amount: s.settled[0].amount, payTo: s.settled[0].payTo, asset: s.settled[0].asset, network: s.settled[0].network },
      { amount: '10000', payTo: SELLER_PAY_TO, asset: USDC[8453].address, network: 'eip155:8453' },
    );
    assert.equal(v2.stats().paid200, 1);
    assert.equal(v2.stats().paidAtomic, '10000');
  });

  it('v1 buyer → v1 seller: 200 with a successful X-PAYMENT-RESPONSE', async () => {
    const r = await buy(`${v1.url}/cheap`, { version: 1, network: 'base-sepolia' });
    assert.equal(r.error, null);
    assert.equal(r.status, 200, r.body);
    assert.equal(r.paymentHeader.name, 'X-PAYMENT');
    assert.ok(r.headers['x-payment-response']);
    assert.equal(r.paymentResponse.success, true);
    assert.equal(r.paymentResponse.network, 'base-sepolia');
    const s = await facStats();
    assert.equal(s.settle.success, 1);
    assert.equal(s.settled[0].x402Version, 1);
    assert.equal(s.settled[0].asset, USDC[84532].address);
    assert.equal(v1.stats().paid200, 1);
  });

  it('v2 buyer → v1 seller: the v2 client pays in v1 with X-PAYMENT', async () => {
    const r = await buy(`${v1.url}/cheap`, { version: 2 });
    assert.equal(r.error, null);
    assert.equal(r.status, 200, r.body);
    assert.equal(r.paymentHeader.name, 'X-PAYMENT');
    assert.equal(r.paymentHeader.payload.x402Version, 1);
    assert.equal(r.paymentResponse.success, true);
    assert.equal(v1.stats().paid200, 1);
  });

  it('v1 buyer → v2 seller: the v1 client cannot read a v2 challenge and pays nothing', async () => {
    const r = await buy(`${v2.url}/cheap`, { version: 1 });
    assert.equal(r.status, null);
    assert.ok(r.error);
    assert.equal((await facStats()).verify.calls, 0);
  });

  it('HTTPS seller: the buyer pays when it trusts the test CA, and fails closed when it does not', async () => {
    const tlsSeller = await startSellerV2({ facilitatorUrl: fac.url, tls: pki });
    try {
      assert.match(tlsSeller.url, /^https:/);
      const ok = await buy(`${tlsSeller.url}/cheap`, { version: 2, ca: pki.caPem });
      assert.equal(ok.status, 200, ok.body);
      assert.equal(ok.paymentResponse.success, true);
      const untrusted = await buy(`${tlsSeller.url}/cheap`, { version: 2 });
      assert.equal(untrusted.status, null);
      assert.match(untrusted.error, /certificate/);
      assert.equal(tlsSeller.stats().paid200, 1);
    } finally {
      await tlsSeller.close();
    }
  });

  it('v2 seller with two options: the client takes the first one (the other network)', async () => {
    const r = await buy(`${v2.url}/multi`, { version: 2 });
    assert.equal(r.status, 200, r.body);
    assert.equal(r.paymentHeader.payload.accepted.network, 'eip155:84532');
    assert.equal(r.paymentResponse.network, 'eip155:84532');
    assert.equal((await facStats()).settled[0].asset, USDC[84532].address);
  });

  it('offer-receipt route: EIP-712 offers and receipt signed by the payTo key, about 3 KB headers', async () => {
    const c = await send(`${v2.url}/signed`);
    assert.equal(c.status, 402);
    assert.ok(c.headers['payment-required'].length > 2500);
    const offers = extractOffersFromPaymentRequired(c.paymentRequired);
    assert.equal(offers.length, 2);
    for (const o of offers) assert.equal((await verifyOfferSignatureEIP712(o)).signer, SELLER_PAY_TO);
    const r = await buy(`${v2.url}/signed`, { version: 2 });
    assert.equal(r.status, 200, r.body);
    const v = await verifyReceiptSignatureEIP712(r.paymentResponse.extensions['offer-receipt'].info.receipt);
    assert.equal(v.signer, SELLER_PAY_TO);
    assert.equal(v.payload.payer, BUYER_ADDRESS);
  });

  it('a paid route whose handler fails is not settled', async () => {
    for (const [seller, version] of [[v2, 2], [v1, 1]]) {
      const r = await buy(`${seller.url}/fail`, { version });
      assert.equal(r.status, 500);
      assert.equal(r.paymentResponse, null);
    }
    const s = await facStats();
    assert.equal(s.verify.valid, 2);
    assert.equal(s.settle.calls, 0);
  });
});

describe('the facilitator refuses bad payments', () => {
  beforeEach(resetAll);

  it('tampered amount (v2): invalid signature, seller answers 402, nothing settled', async () => {
    const r = await buy(`${v2.url}/cheap`, { version: 2, tamper: (p) => { p.payload.authorization.value = '10001'; return p; } });
    assert.equal(r.status, 402);
    assert.equal(r.paymentRequired.error, 'invalid_exact_evm_payload_signature');
    const s = await facStats();
    assert.equal(s.verify.invalid, 1);
    assert.equal(s.settle.calls, 0);
    assert.equal(v2.stats().paid200, 0);
  });

  it('tampered recipient (v1): invalid signature in the v1 body', async () => {
    const r = await buy(`${v1.url}/cheap`, { version: 1, tamper: (p) => { p.payload.authorization.to = ALT_PAY_TO; return p; } });
    assert.equal(r.status, 402);
    assert.equal(r.json.error, 'invalid_exact_evm_payload_signature');
    assert.equal((await facStats()).settle.calls, 0);
  });

  it('replayed payment header: the nonce is used, second delivery refused (v2 and v1)', async () => {
    for (const [seller, version] of [[v2, 2], [v1, 1]]) {
      const first = await buy(`${seller.url}/cheap`, { version });
      assert.equal(first.status, 200);
      const replay = await send(`${seller.url}/cheap`, { headers: { [first.paymentHeader.name]: first.paymentHeader.value } });
      assert.equal(replay.status, 402);
      const reason = version === 2 ? replay.paymentRequired.error : replay.json.error;
      assert.equal(reason, 'invalid_exact_evm_nonce_already_used');
      assert.equal(seller.stats().paid200, 1);
    }
    const s = await facStats();
    assert.equal(s.settle.success, 2);
    assert.equal(s.reasons.invalid_exact_evm_nonce_already_used, 2);
  });

  // handSigned builds a v2 payment for /cheap on the v2 seller from its own challenge, signed by hand.
  async function handSigned(change) {
    const challenge = await send(`${v2.url}/cheap`);
    assert.equal(challenge.status, 402);
    const accepted = challenge.paymentRequired.accepts[0];
    const now = Math.floor(Date.now() / 1000);
    const auth = { chainId: 8453, to: accepted.payTo, value: accepted.amount, validAfter: '0', validBefore: String(now + 60), ...change(now) };
    const payload = await signAuthorization(auth);
    return encodePayment({ x402Version: 2, resource: challenge.paymentRequired.resource, accepted, payload });
  }

  const cases = [
    ['expired window (validBefore < now+6)', (now) => ({ validBefore: String(now + 3) }), 'invalid_exact_evm_payload_authorization_valid_before'],
    ['not yet valid (validAfter in the future)', (now) => ({ validAfter: String(now + 120) }), 'invalid_exact_evm_payload_authorization_valid_after'],
    ['signed to another recipient', () => ({ to: ALT_PAY_TO }), 'invalid_exact_evm_payload_recipient_mismatch'],
    ['signed for a different amount', () => ({ value: '9999' }), 'invalid_exact_evm_payload_authorization_value_mismatch'],
    ['signed with the wrong EIP-712 domain name', () => ({ domain: { name: 'USDC', version: '2', chainId: 8453, verifyingContract: USDC[8453].address } }), 'invalid_exact_evm_payload_signature'],
  ];
  for (const [name, change, reason] of cases) {
    it(`${name} → ${reason}`, async () => {
      const header = await handSigned(change);
      const r = await send(`${v2.url}/cheap`, { headers: { 'PAYMENT-SIGNATURE': header } });
      assert.equal(r.status, 402);
      assert.equal(r.paymentRequired.error, reason);
      assert.equal((await facStats()).settle.calls, 0);
    });
  }

  it('a correct hand-signed payment is accepted (the negative cases above are not vacuous)', async () => {
    const header = await handSigned(() => ({}));
    const r = await send(`${v2.url}/cheap`, { headers: { 'PAYMENT-SIGNATURE': header } });
    assert.equal(r.status, 200, r.body);
    assert.equal(r.paymentResponse.success, true);
  });

  it('v2 accepted that differs from the requirements is refused', async () => {
    const challenge = await send(`${v2.url}/cheap`);
    const req = challenge.paymentRequired.accepts[0];
    const now = Math.floor(Date.now() / 1000);
    const payload = await signAuthorization({ chainId: 8453, to: req.payTo, value: req.amount, validBefore: String(now + 60) });
    const body = { x402Version: 2, paymentPayload: { x402Version: 2, accepted: { ...req, maxTimeoutSeconds: 999 }, payload }, paymentRequirements: req };
    const res = await (await fetch(`${fac.url}/verify`, { method: 'POST', body: JSON.stringify(body) })).json();
    assert.equal(res.isValid, false);
    assert.equal(res.invalidReason, 'invalid_payment_requirements');
    const ok = await (await fetch(`${fac.url}/verify`, { method: 'POST', body: JSON.stringify({ ...body, paymentPayload: { ...body.paymentPayload, accepted: req } }) })).json();
    assert.equal(ok.isValid, true);
  });

  it('two concurrent settles of one authorization: exactly one succeeds', async () => {
    const challenge = await send(`${v2.url}/cheap`);
    const req = challenge.paymentRequired.accepts[0];
    const payload = await signAuthorization({ chainId: 8453, to: req.payTo, value: req.amount, validBefore: String(Math.floor(Date.now() / 1000) + 60) });
    const body = JSON.stringify({ x402Version: 2, paymentPayload: { x402Version: 2, accepted: req, payload }, paymentRequirements: req });
    const results = await Promise.all(Array.from({ length: 8 }, () => fetch(`${fac.url}/settle`, { method: 'POST', body }).then((r) => r.json())));
    assert.equal(results.filter((r) => r.success).length, 1);
    assert.ok(results.filter((r) => !r.success).every((r) => r.errorReason === 'invalid_exact_evm_nonce_already_used'));
  });
});

describe('facilitator outage', () => {
  beforeEach(resetAll);
  after(() => fetch(`${fac.url}/_outage`, { method: 'POST', body: JSON.stringify({ on: false }) }));

  it('sellers refuse to deliver and nothing is settled (behaviour recorded)', async (t) => {
    await fetch(`${fac.url}/_outage`, { method: 'POST', body: JSON.stringify({ on: true }) });
    const r2 = await buy(`${v2.url}/cheap`, { version: 2 });
    const r1 = await buy(`${v1.url}/cheap`, { version: 1 });
    t.diagnostic(`v2 seller during outage: status ${r2.status}, PAYMENT-REQUIRED.error ${JSON.stringify(r2.paymentRequired?.error)}, body ${r2.body}`);
    t.diagnostic(`v1 seller during outage: status ${r1.status}, body.error ${JSON.stringify(r1.json?.error)}`);
    for (const r of [r2, r1]) {
      assert.notEqual(r.status, 200);
      assert.equal(r.paymentResponse?.success ?? false, false);
    }
    const s = await facStats();
    assert.ok(s.outageRejected >= 2);
    assert.equal(s.settle.success, 0);
    assert.equal(v2.stats().paid200 + v1.stats().paid200, 0);

    await fetch(`${fac.url}/_outage`, { method: 'POST', body: JSON.stringify({ on: false }) });
    const again = await buy(`${v2.url}/cheap`, { version: 2 });
    assert.equal(again.status, 200, 'the seller recovers once the facilitator is back');
  });
});
