// The local facilitator against the real x402 captures (x402/testdata/fixtures): the same requests get the same
// verdicts the official facilitator gave, and /supported has the captured shape. Then the standalone programs
// (facilitator, sellers, buyer CLI) are run the way the Go examples run them.

import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { FACILITATOR_SIGNER, checkPayment, startFacilitator } from '../lib/facilitator.mjs';
import { SOLANA_DEVNET, feePayerSigner } from '../lib/solana.mjs';
import { UptoEvmScheme } from '@x402/evm/upto/client';
import { privateKeyToAccount } from 'viem/accounts';
import { BUYER_KEY, SELLER_PAY_TO } from '../lib/wallets.mjs';
import { freePort } from '../lib/payguard.mjs';
import { runNode, spawnReady } from '../lib/spawn.mjs';
import { REPO_ROOT } from '../lib/payguard.mjs';

// The real captures, as copied into the repository by the x402 package (X402_FIXTURES overrides).
const FIXTURES = process.env.X402_FIXTURES ?? path.join(REPO_ROOT, 'x402', 'testdata', 'fixtures');
const fixture = (name) => JSON.parse(fs.readFileSync(path.join(FIXTURES, name), 'utf8'));
// The captures were signed with validBefore 1795323954/5; judge them as of shortly before that.
const captureTime = 1795323300;

describe('facilitator verdicts match the captures', () => {
  for (const version of ['v1', 'v2']) {
    for (const kind of ['verify-valid', 'verify-invalid']) {
      it(`${version} ${kind}`, async () => {
        const f = fixture(`${version}/facilitator-${kind}.json`);
        let got;
        try {
          const p = await checkPayment(f.request, new Set(), captureTime);
          got = { isValid: true, payer: p.payer };
        } catch (err) {
          got = { isValid: false, invalidReason: err.reason, payer: err.payer };
        }
        assert.deepEqual(got, f.response);
      });
    }

    it(`${version} settle success, then the same authorization again fails as in the capture`, async () => {
      const fac = await startFacilitator({ now: () => captureTime });
      try {
        const ok = fixture(`${version}/facilitator-settle-success.json`);
        const failed = fixture(`${version}/facilitator-settle-failure.json`);
        const post = async (body) => (await fetch(`${fac.url}/settle`, { method: 'POST', body: JSON.stringify(body) })).json();
        const first = await post(ok.request);
        assert.equal(first.success, true);
        assert.equal(first.payer, ok.response.payer);
        assert.equal(first.network, ok.response.network);
        assert.match(first.transaction, /^0x[0-9a-f]{64}$/);
        const second = await post(failed.request);
        const { errorMessage, ...shape } = second;
        assert.deepEqual(shape, failed.response);
        const verify = await (await fetch(`${fac.url}/verify`, { method: 'POST', body: JSON.stringify(ok.request) })).json();
        assert.equal(verify.isValid, false, 'verify also refuses a settled nonce');
        assert.equal(verify.invalidReason, 'invalid_exact_evm_nonce_already_used');
      } finally {
        await fac.close();
      }
    });
  }

  it('the captures are judged as expired once their window has passed', async () => {
    const f = fixture('v2/facilitator-verify-valid.json');
    await assert.rejects(checkPayment(f.request, new Set(), 1795323954), { reason: 'invalid_exact_evm_payload_authorization_valid_before' });
  });

  it('malformed and unsupported input gets the SDK reason strings, never a crash', async () => {
    const f = fixture('v2/facilitator-verify-valid.json').request;
    const bad = [
      [{ ...f, x402Version: 3 }, 'invalid_x402_version'],
      [{ ...f, paymentRequirements: { ...f.paymentRequirements, network: 'eip155:1' } }, 'invalid_network'],
      [{ ...f, paymentRequirements: { ...f.paymentRequirements, scheme: 'upto' } }, 'invalid_scheme'],
      [{ ...f, paymentPayload: { ...f.paymentPayload, payload: { signature: '0x12' } } }, 'invalid_payload'],
      [{ ...f, paymentRequirements: { ...f.paymentRequirements, extra: {} } }, 'invalid_payment_requirements'],
      [{ ...f, paymentPayload: { ...f.paymentPayload, accepted: { ...f.paymentPayload.accepted, network: 'eip155:8453' } } }, 'invalid_network'],
      [null, 'invalid_payload'],
    ];
    for (const [body, reason] of bad) {
      await assert.rejects(checkPayment(body, new Set(), captureTime), { reason });
    }
    const fac = await startFacilitator();
    try {
      const res = await fetch(`${fac.url}/verify`, { method: 'POST', body: 'not json' });
      assert.equal(res.status, 400);
      assert.equal((await res.json()).invalidReason, 'invalid_payload');
    } finally {
      await fac.close();
    }
  });

  it('/supported lists v1 and v2 exact kinds and v2 upto kinds for the served networks, in the captured shape', async () => {
    const fac = await startFacilitator();
    try {
      const got = await (await fetch(`${fac.url}/supported`)).json();
      const captured = fixture('facilitator-supported.json').response;
      assert.deepEqual(Object.keys(got).sort(), Object.keys(captured).sort());
      const kinds = got.kinds.map((k) => `${k.x402Version}/${k.scheme}/${k.network}`).sort();
      assert.deepEqual(kinds, ['1/exact/base', '1/exact/base-sepolia', '1/exact/solana-devnet', '2/exact/eip155:8453', '2/exact/eip155:84532', `2/exact/${SOLANA_DEVNET}`, '2/upto/eip155:8453', '2/upto/eip155:84532']);
      assert.ok(got.kinds.filter((k) => k.scheme === 'upto').every((k) => k.extra.facilitatorAddress === FACILITATOR_SIGNER));
      assert.ok(Array.isArray(got.signers['eip155:*']));
      // Solana: the fee payer is named in the kind's extra (how sellers learn it) and among the signers.
      const svmKind = got.kinds.find((k) => k.network === SOLANA_DEVNET);
      assert.equal(svmKind.extra.feePayer, (await feePayerSigner()).address);
      assert.equal(got.kinds.find((k) => k.network === 'solana-devnet').extra.feePayer, svmKind.extra.feePayer);
      assert.deepEqual(got.signers['solana:*'], [svmKind.extra.feePayer]);
    } finally {
      await fac.close();
    }
  });

  it('outage hook answers 503 to verify and settle, and _reset clears it', async () => {
    const fac = await startFacilitator();
    try {
      await fetch(`${fac.url}/_outage`, { method: 'POST', body: '{"on":true}' });
      assert.equal((await fetch(`${fac.url}/verify`, { method: 'POST', body: '{}' })).status, 503);
      assert.equal((await fetch(`${fac.url}/settle`, { method: 'POST', body: '{}' })).status, 503);
      await fetch(`${fac.url}/_reset`, { method: 'POST' });
      const stats = await (await fetch(`${fac.url}/_stats`)).json();
      assert.equal(stats.outage, false);
      assert.equal(stats.outageRejected, 0);
    } finally {
      await fac.close();
    }
  });
});

describe('standalone programs', () => {
  const procs = [];
  after(async () => { await Promise.all(procs.map((p) => p.stop())); });
  let facUrl;

  before(async () => {
    const port = await freePort();
    const fac = await spawnReady('facilitator.mjs', ['--port', String(port)]);
    procs.push(fac);
    facUrl = fac.ready.url;
    assert.equal(facUrl, `http://127.0.0.1:${port}`);
  });

  for (const [script, version, network] of [['seller-v2.mjs', 2, 'base'], ['seller-v1.mjs', 1, 'base-sepolia'], ['seller-v1.mjs', 2, 'base']]) {
    it(`buyer CLI (v${version}) pays ${script} on ${network}`, async () => {
      const seller = await spawnReady(script, ['--port', '0', '--facilitator', facUrl, '--network', network]);
      procs.push(seller);
      const r = await runNode('buyer.mjs', ['--url', `${seller.ready.url}/cheap`, '--version', String(version), '--network', network]);
      assert.equal(r.code, 0, r.stderr);
      const out = JSON.parse(r.stdout);
      assert.equal(out.status, 200);
      assert.equal(out.paymentResponse.success, true);
      const stats = await (await fetch(`${seller.ready.url}/stats`)).json();
      assert.equal(stats.paid200, 1);
    });
  }

  it('buyer CLI: bad usage exits 2, an unreachable URL exits 1', async () => {
    assert.equal((await runNode('buyer.mjs', ['--version', '3', '--url', 'http://127.0.0.1:9/'])).code, 2);
    const port = await freePort();
    const r = await runNode('buyer.mjs', ['--url', `http://127.0.0.1:${port}/`]);
    assert.equal(r.code, 1);
    assert.equal(JSON.parse(r.stdout).status, null);
  });

  it('a seller whose network the facilitator does not serve fails at start', async () => {
    await assert.rejects(spawnReady('seller-v2.mjs', ['--facilitator', facUrl, '--network', 'eip155:1']), /exited with 1/);
  });
});

// upto: what the official client signs is checked as @x402/evm's upto facilitator checks it, offline.
describe('facilitator: upto (Permit2 witness transfer)', () => {
  const requirements = {
    scheme: 'upto', network: 'eip155:8453', amount: '200000', asset: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
    payTo: SELLER_PAY_TO, maxTimeoutSeconds: 60,
    extra: { name: 'USD Coin', version: '2', assetTransferMethod: 'permit2', facilitatorAddress: FACILITATOR_SIGNER },
  };
  const signed = async (req = requirements) => {
    const p = await new UptoEvmScheme(privateKeyToAccount(BUYER_KEY)).createPaymentPayload(2, req);
    return { x402Version: 2, paymentPayload: { ...p, accepted: req, resource: { url: 'http://127.0.0.1/metered' } }, paymentRequirements: req };
  };
  const now = () => Math.floor(Date.now() / 1000);
  const reason = async (body, phase) => checkPayment(body, new Set(), now(), phase).then(() => 'valid', (e) => e.reason);

  it('a payment signed by the official client verifies; at settle the usage is at most the maximum', async () => {
    const body = await signed();
    assert.equal(await reason(body), 'valid');
    assert.equal(await reason({ ...body, paymentRequirements: { ...requirements, amount: '70000' } }, 'settle'), 'valid');
    assert.equal(await reason({ ...body, paymentRequirements: { ...requirements, amount: '0' } }, 'settle'), 'valid');
    assert.equal(await reason({ ...body, paymentRequirements: { ...requirements, amount: '200001' } }, 'settle'), 'invalid_upto_evm_payload_settlement_exceeds_amount');
    // At verify the amount is the maximum, exactly (the seller's requirements must match what was accepted).
    assert.equal(await reason({ ...body, paymentRequirements: { ...requirements, amount: '70000' } }), 'invalid_payment_requirements');
  });

  it('every signed field is bound: a change breaks the signature or is refused by name', async () => {
    const body = await signed();
    const edit = (f) => {
      const b = structuredClone(body);
      f(b.paymentPayload.payload.permit2Authorization);
      return b;
    };
    assert.equal(await reason(edit((a) => { a.permitted.amount = '200001'; })), 'permit2_amount_mismatch');
    assert.equal(await reason(edit((a) => { a.nonce = '1'; })), 'invalid_permit2_signature');
    assert.equal(await reason(edit((a) => { a.deadline = String(now() + 3600); })), 'invalid_permit2_signature');
    assert.equal(await reason(edit((a) => { a.witness.to = FACILITATOR_SIGNER; })), 'invalid_permit2_recipient_mismatch');
    assert.equal(await reason(edit((a) => { a.witness.facilitator = SELLER_PAY_TO; })), 'invalid_upto_evm_facilitator_mismatch');
    assert.equal(await reason(edit((a) => { a.spender = SELLER_PAY_TO; })), 'invalid_permit2_spender');
    assert.equal(await reason(edit((a) => { a.deadline = String(now() - 1); })), 'permit2_deadline_expired');
  });

  it('a nonce settles once', async () => {
    const fac = await startFacilitator();
    try {
      const body = await signed();
      const settle = async () => (await fetch(`${fac.url}/settle`, { method: 'POST', body: JSON.stringify({ ...body, paymentRequirements: { ...requirements, amount: '5' } }) })).json();
      const first = await settle();
      assert.equal(first.success, true);
      assert.equal(first.amount, '5');
      const second = await settle();
      assert.equal(second.success, false);
      assert.equal(second.errorReason, 'invalid_exact_evm_nonce_already_used');
    } finally {
      await fac.close();
    }
  });
});
