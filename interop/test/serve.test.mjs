// payguard serve (the pay-per-call screening API) paid by the official x402 clients, through the local
// facilitator: what was settled, to whom, for how much; what is never charged.

import { describe, it, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { generateKeyPairSync } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startFacilitator } from '../lib/facilitator.mjs';
import { buy, send } from '../lib/buyer.mjs';
import { startServe, REPO_ROOT } from '../lib/payguard.mjs';
import { BUYER_ADDRESS, SELLER_PAY_TO } from '../lib/wallets.mjs';
import {
  decodeSignedOffers, extractJWSHeader, extractOffersFromPaymentRequired, verifyOfferSignatureJWS,
  verifyReceiptMatchesOffer, verifyReceiptSignatureJWS,
} from '@x402/extensions/offer-receipt';
import { USDC } from '../lib/networks.mjs';

// The service's own wallet (Anvil account 3): every fee must be settled to it.
const SERVICE_PAY_TO = '0x90F79bf6EB2c4f870365E785982E1f101E93b906';
const SANCTIONS_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'testdata', 'ofac');
const SANCTIONED = '0x098B716B8Aaf21512996dC57EB0615e2383E2f96'; // LAZARUS GROUP in the OFAC excerpt
const V2_CHALLENGE = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'x402', 'testdata', 'fixtures', 'v2', 'challenge-402.json'), 'utf8'));

let tmp;
let fac;
let api;

before(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'interop-serve-'));
  fac = await startFacilitator();
  api = await startServe({
    dir: path.join(tmp, 'serve'), payTo: SERVICE_PAY_TO, facilitatorUrl: fac.url,
    args: ['--offline', '--sanctions-dir', SANCTIONS_DIR],
  });
});

after(async () => {
  await api?.stop();
  await fac?.close();
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

const facStats = async () => (await fetch(`${fac.url}/_stats`)).json();
const reset = () => fetch(`${fac.url}/_reset`, { method: 'POST' });

describe('paid calls settle the fee to the service wallet', () => {
  beforeEach(reset);

  for (const version of [2, 1]) {
    it(`GET /v1/check paid by the v${version} client`, async () => {
      const r = await buy(`${api.url}/v1/check?address=${SELLER_PAY_TO}`, { version });
      assert.equal(r.error, null, r.error);
      assert.equal(r.status, 200, r.body);
      assert.equal(r.paymentHeader.name, version === 2 ? 'PAYMENT-SIGNATURE' : 'X-PAYMENT');
      assert.equal(r.paymentResponse?.success, true);
      assert.equal(r.json.risk, 'low');
      assert.ok(r.json.data_as_of);
      const s = await facStats();
      assert.equal(s.settle.success, 1);
      assert.deepEqual({ amount: s.settled[0].amount, payTo: s.settled[0].payTo, asset: s.settled[0].asset },
        { amount: '10000', payTo: SERVICE_PAY_TO, asset: USDC[8453].address });
    });
  }

  it('a sanctioned wallet is reported high risk (a delivered, charged result)', async () => {
    const r = await buy(`${api.url}/v1/check?address=${SANCTIONED}`, { version: 2 });
    assert.equal(r.status, 200, r.body);
    assert.equal(r.json.risk, 'high');
    assert.ok(r.json.flags.includes('sanctioned_address'));
    assert.equal((await facStats()).settle.success, 1);
  });

  it('POST /v1/preflight with a real v2 challenge, paid $0.02', async () => {
    const challenge = V2_CHALLENGE.response.decoded['payment-required'];
    const r = await buy(`${api.url}/v1/preflight`, {
      version: 2, method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ challenge }),
    });
    assert.equal(r.status, 200, r.body);
    assert.ok(['allow', 'hold', 'block'].includes(r.json.decision));
    // The fixture's network is Base Sepolia, outside the default allowed networks.
    assert.equal(r.json.decision, 'block');
    assert.ok(r.json.reasons.some((x) => /^block: network eip155:84532 not allowed/.test(x)), JSON.stringify(r.json.reasons));
    assert.ok(r.json.receipt?.id);
    const s = await facStats();
    assert.equal(s.settled.length, 1);
    assert.equal(s.settled[0].amount, '20000');
  });

  it('the signed offer and the delivery receipt verify with @x402/extensions against the published key set', async () => {
    const body = JSON.stringify({ cart: { merchant_domain: 'example.com', total_usd: 0.1, pay_to: SELLER_PAY_TO } });
    const init = { method: 'POST', headers: { 'content-type': 'application/json' }, body };
    const challenge = await send(`${api.url}/v1/preflight`, init);
    assert.equal(challenge.status, 402);
    const offers = extractOffersFromPaymentRequired(challenge.paymentRequired);
    assert.equal(offers.length, challenge.paymentRequired.accepts.length);
    const jwks = await (await fetch(`${api.url}/.well-known/payguard-keys.json`)).json();
    const jwk = jwks.keys.find((k) => k.kid === extractJWSHeader(offers[0].signature).kid);
    assert.ok(jwk, 'the offer is signed by a published key');
    const offer = await verifyOfferSignatureJWS(offers[0], jwk);
    assert.deepEqual({ payTo: offer.payTo, amount: offer.amount, network: offer.network, resourceUrl: offer.resourceUrl },
      { payTo: SERVICE_PAY_TO, amount: '20000', network: 'eip155:8453', resourceUrl: `${api.url}/v1/preflight` });

    const paid = await buy(`${api.url}/v1/preflight`, { version: 2, ...init });
    assert.equal(paid.status, 200, paid.body);
    const receipt = paid.paymentResponse.extensions?.['offer-receipt']?.info?.receipt;
    assert.ok(receipt, 'the settlement carries a receipt');
    const rp = await verifyReceiptSignatureJWS(receipt, jwk);
    assert.equal(rp.payer, BUYER_ADDRESS);
    assert.equal(verifyReceiptMatchesOffer(receipt, decodeSignedOffers(offers)[0], [BUYER_ADDRESS]), true);
    // A receipt does not verify under a different key: the check above is not vacuous.
    const other = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ format: 'jwk' });
    await assert.rejects(verifyReceiptSignatureJWS(receipt, { ...other, alg: 'ES256' }));
  });

  it('a payment header presented again is never settled twice: the same question gets the kept result, another is refused', async () => {
    const first = await buy(`${api.url}/v1/check?address=${SELLER_PAY_TO}`, { version: 2 });
    assert.equal(first.status, 200);
    const headers = { [first.paymentHeader.name]: first.paymentHeader.value };
    const retry = await send(`${api.url}/v1/check?address=${SELLER_PAY_TO}`, { headers });
    assert.equal(retry.status, 200, retry.body);
    assert.equal(retry.body, first.body);
    assert.deepEqual(retry.paymentResponse, first.paymentResponse);
    const replay = await send(`${api.url}/v1/check?address=${SANCTIONED}`, { headers });
    assert.equal(replay.status, 402, replay.body);
    assert.equal(replay.json?.error, 'invalid_exact_evm_nonce_already_used');
    const s = await facStats();
    assert.deepEqual({ verifies: s.verify.calls, settles: s.settle.calls, success: s.settle.success }, { verifies: 1, settles: 1, success: 1 });
  });
});

describe('what is never charged', () => {
  beforeEach(reset);
  after(() => fetch(`${fac.url}/_outage`, { method: 'POST', body: '{"on":false}' }));

  it('bad input: 400 before any payment is asked for', async () => {
    const r = await buy(`${api.url}/v1/check`, { version: 2 });
    assert.equal(r.status, 400, r.body);
    assert.equal(r.paymentHeader, null);
    const bad = await buy(`${api.url}/v1/preflight`, { version: 2, method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"challenge":' });
    assert.equal(bad.status, 400, bad.body);
    const s = await facStats();
    assert.equal(s.verify.calls + s.settle.calls, 0);
  });

  it('facilitator outage: 503, not settled', async (t) => {
    await fetch(`${fac.url}/_outage`, { method: 'POST', body: '{"on":true}' });
    const r = await buy(`${api.url}/v1/check?address=${SELLER_PAY_TO}`, { version: 2 });
    t.diagnostic(`during outage: ${r.status} ${r.body.trim()}`);
    assert.equal(r.status, 503, r.body);
    assert.equal(r.json?.error?.code, 'facilitator_unavailable');
    assert.equal((await facStats()).settle.success, 0);
  });

  it('free trial: three calls per IP per day, then 402 and no automatic payment', async () => {
    const url = `${api.url}/v1/check?address=${SELLER_PAY_TO}&trial=1`;
    for (let i = 0; i < 3; i++) {
      const r = await send(url);
      assert.equal(r.status, 200, `trial call ${i + 1}: ${r.body}`);
    }
    const exhausted = await send(url);
    assert.equal(exhausted.status, 402);
    const s = await facStats();
    assert.equal(s.verify.calls + s.settle.calls, 0);
  });
});

// Issue 18, server mode, as an attacker would try it against the real binary paid by the official client.
describe('server-mode attacks (issue 18 items 8 and 9)', () => {
  beforeEach(reset);

  it('20 concurrent replays of one payment cost one /verify and one settle', async () => {
    // A real signed payment that was never settled: the facilitator is down when it is first presented
    // (its claim is released), then it is sent 20 times at once. On the old code every copy was verified
    // (20 /verify calls) before the one settle.
    const url = `${api.url}/v1/check?address=${SELLER_PAY_TO}`;
    await fetch(`${fac.url}/_outage`, { method: 'POST', body: '{"on":true}' });
    const first = await buy(url, { version: 2 });
    await reset();
    assert.equal(first.status, 503, first.body);
    assert.ok(first.paymentHeader, 'the client signed a payment');
    const headers = { [first.paymentHeader.name]: first.paymentHeader.value };
    const rs = await Promise.all(Array.from({ length: 20 }, () => send(url, { headers })));
    // One is worked for and settled; the others are refused as replays or, arriving once its result is kept,
    // given that same result again (SPEC §8.6): never a second verify, settle or work.
    const ok = rs.filter((r) => r.status === 200);
    const refused = rs.filter((r) => r.status === 402 && r.json?.error === 'invalid_exact_evm_nonce_already_used');
    const s = await facStats();
    assert.equal(new Set(ok.map((r) => r.body)).size, 1, 'every 200 is the one result');
    assert.deepEqual({ answered: ok.length + refused.length, verifies: s.verify.calls, settles: s.settle.calls },
      { answered: 20, verifies: 1, settles: 1 }, rs.filter((r) => r.status !== 200).map((r) => r.body).slice(0, 3).join('\n'));
    assert.ok(ok.length >= 1);
  });

  const forms = {
    'a zero-width space': `${SANCTIONED.slice(0, 12)}\u200b${SANCTIONED.slice(12)}`,
    'no 0x': SANCTIONED.slice(2),
    'a fullwidth ０ｘ': `０ｘ${SANCTIONED.slice(2)}`,
  };
  for (const [name, address] of Object.entries(forms)) {
    it(`a listed address with ${name} is found (risk high), not answered low`, async () => {
      const r = await buy(`${api.url}/v1/check?address=${encodeURIComponent(address)}`, { version: 2 });
      assert.equal(r.status, 200, r.body);
      assert.equal(r.json.risk, 'high', r.body);
      assert.ok(r.json.flags.includes('sanctioned_address'), r.body);
    });
  }

  for (const address of ['0xZZ', 'hello world']) {
    it(`"${address}" is no wallet address: flagged unrecognized_address, risk unknown (charged, never low)`, async () => {
      const r = await buy(`${api.url}/v1/check?address=${encodeURIComponent(address)}`, { version: 2 });
      assert.equal(r.status, 200, r.body);
      assert.equal(r.json.risk, 'unknown', r.body);
      assert.ok(r.json.flags.includes('unrecognized_address'), r.body);
      assert.equal((await facStats()).settle.success, 1);
    });
  }
});

// Issue 37: a payer who paid gets what they paid for, against the real binary paid by the official client.
describe('a buyer that disconnects while /settle is in flight (issue 37)', () => {
  beforeEach(reset);
  after(() => fetch(`${fac.url}/_hold_settle`, { method: 'POST', body: '{"on":false}' }));

  const hold = (on) => fetch(`${fac.url}/_hold_settle`, { method: 'POST', body: JSON.stringify({ on }) });
  const until = async (pred) => {
    for (;;) {
      const s = await facStats();
      if (pred(s)) return s;
      await new Promise((r) => setTimeout(r, 20));
    }
  };

  // The official client pays; it walks away once /settle is at the facilitator (held there); the facilitator
  // then completes the transfer. Returns the payment header the client sent.
  async function payAndWalkAway(url) {
    await hold(true);
    const ac = new AbortController();
    const pending = buy(url, { version: 2, signal: ac.signal });
    await until((s) => s.settle.held === 1);
    ac.abort();
    const r = await pending;
    assert.equal(r.status, null, `the buyer walked away before any answer: ${r.status} ${r.body}`);
    const paid = r.exchanges.find((e) => e.headers['payment-signature']);
    assert.ok(paid, 'the client signed and sent a payment');
    // Give the server time to notice the disconnect, so that the old code (which cancelled /settle with the
    // request) shows its fault; nothing below depends on this wait.
    await new Promise((r) => setTimeout(r, 300));
    await hold(false);
    return { 'PAYMENT-SIGNATURE': paid.headers['payment-signature'] };
  }

  it('the settlement still completes, and the retry with the same payment gets the result: one settle', async () => {
    const url = `${api.url}/v1/check?address=${SANCTIONED}`;
    const headers = await payAndWalkAway(url);
    const retry = await send(url, { headers });
    assert.equal(retry.status, 200, retry.body);
    assert.equal(retry.json.risk, 'high');
    assert.equal(retry.paymentResponse?.success, true);
    const s = await until((st) => st.settle.success + st.settle.failure === 1);
    assert.deepEqual({ settles: s.settle.calls, success: s.settle.success, abandoned: s.settle.abandoned, verifies: s.verify.calls },
      { settles: 1, success: 1, abandoned: 0, verifies: 1 });
    assert.equal(retry.paymentResponse.transaction, s.settled[0].transaction);
    assert.equal(s.settled[0].payTo, SERVICE_PAY_TO);
  });
});
