// A local x402 facilitator for the interop tests: POST /verify, POST /settle and GET /supported for x402
// versions 1 and 2, scheme "exact", EVM networks base, base-sepolia, eip155:8453 and eip155:84532, and Solana
// devnet (solana-devnet in v1); and scheme "upto" (v2 only, specs/schemes/upto/scheme_upto_evm.md) on the v2
// EVM networks.
//
// There is no chain here, so it checks offline everything a facilitator can check without one: the EIP-712
// TransferWithAuthorization signature recovers to authorization.from; the recipient, the amount (exactly), the
// time window and the v2 `accepted` copy agree with the requirements; a nonce is never settled twice. Settling
// returns a made-up but well-formed transaction hash. Error strings follow the official SDK facilitators.
// A Solana payment is checked as the official SVM facilitator does (lib/solana.mjs: the payer's signature over
// the message, the instruction layout, the transfer's amount, mint and destination, the fee payer); settling
// co-signs the message with the fee payer's key (that signature is the transaction's id) and records it, and a
// message is settled at most once.
//
// upto: the Permit2 PermitWitnessTransferFrom signature (witness {to, facilitator, validAfter}) recovers to
// permit2Authorization.from; the spender is the x402 upto proxy, witness.to is payTo, witness.facilitator is
// this facilitator, the token is the asset, the window is open, the nonce is unused; at verify the permitted
// amount equals the requirements' amount (the maximum), at settle the requirements' amount (the seller's
// usage, Settlement-Overrides) is at most it. A settle answers with the settled `amount`.
//
// Test hooks: GET /_stats, POST /_outage {"on":true|false} (503 on verify and settle), POST /_reset,
// POST /_hold_settle {"on":true|false} (settle requests wait until it is turned off, then settle whether or not
// their caller is still connected, as a facilitator that already submitted the transfer does; stats count
// settle.held and settle.abandoned, the held requests whose caller went away),
// POST /_forge {"uptoAmount":"N"} (the next upto settlement reports N as its amount: a lying facilitator or
// seller; {} turns it off).
//
// Standalone: node interop/lib/facilitator.mjs --port 4020 [--host 127.0.0.1]

import http from 'node:http';
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';
import { getAddress, isAddress, keccak256, toHex, verifyTypedData } from 'viem';
import { PERMIT2_ADDRESS, uptoPermit2WitnessTypes, x402UptoPermit2ProxyAddress } from '@x402/evm';
import { V1_NETWORKS, V2_NETWORKS, chainIdFor } from './networks.mjs';
import { SOLANA_DEVNET, SvmInvalid, SvmReason, checkSvmPayment, cosign, feePayerSigner } from './solana.mjs';

/** The address the facilitator claims to sign settlements with (it signs nothing; /supported lists it). */
export const FACILITATOR_SIGNER = '0xfAB8bd2A52607c1e3D7cFd8182a795F12060B393';

/** Error reasons, as the official facilitators spell them. */
export const Reason = Object.freeze({
  signature: 'invalid_exact_evm_payload_signature',
  recipient: 'invalid_exact_evm_payload_recipient_mismatch',
  validBefore: 'invalid_exact_evm_payload_authorization_valid_before',
  validAfter: 'invalid_exact_evm_payload_authorization_valid_after',
  value: 'invalid_exact_evm_payload_authorization_value_mismatch',
  nonceUsed: 'invalid_exact_evm_nonce_already_used',
  network: 'invalid_network',
  scheme: 'invalid_scheme',
  version: 'invalid_x402_version',
  payload: 'invalid_payload',
  requirements: 'invalid_payment_requirements',
  // upto, as @x402/evm's upto facilitator spells them
  permit2Signature: 'invalid_permit2_signature',
  permit2Spender: 'invalid_permit2_spender',
  permit2Recipient: 'invalid_permit2_recipient_mismatch',
  uptoFacilitator: 'invalid_upto_evm_facilitator_mismatch',
  permit2Deadline: 'permit2_deadline_expired',
  permit2NotYetValid: 'permit2_not_yet_valid',
  permit2Amount: 'permit2_amount_mismatch',
  permit2Token: 'permit2_token_mismatch',
  uptoExceeds: 'invalid_upto_evm_payload_settlement_exceeds_amount',
});

const transferWithAuthorizationTypes = {
  TransferWithAuthorization: [
    { name: 'from', type: 'address' },
    { name: 'to', type: 'address' },
    { name: 'value', type: 'uint256' },
    { name: 'validAfter', type: 'uint256' },
    { name: 'validBefore', type: 'uint256' },
    { name: 'nonce', type: 'bytes32' },
  ],
};

// The facilitator rejects an authorization that expires within this many seconds, as the SDK ones do.
const minValiditySeconds = 6n;
const maxBodyBytes = 256 * 1024;

const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
const isUint = (v) => typeof v === 'string' && /^[0-9]{1,78}$/.test(v);
const isBytes32 = (v) => typeof v === 'string' && /^0x[0-9a-fA-F]{64}$/.test(v);
const isSignature = (v) => typeof v === 'string' && /^0x[0-9a-fA-F]{130,}$/.test(v);

/** Invalid carries a verification failure: the reason string and a human message. */
class Invalid extends Error {
  constructor(reason, message) {
    super(message);
    this.reason = reason;
  }
}

/**
 * checkPayment validates a /verify or /settle body offline. It returns {payer, network, payTo, amount, nonceKey}
 * or rejects with Invalid. usedNonces is consulted, not changed; a caller that marks a nonce must check the set again
 * after the await, in the same synchronous step as the marking.
 */
export async function checkPayment(body, usedNonces, nowSeconds, phase = 'verify') {
  if (!isObject(body)) throw new Invalid(Reason.payload, 'body is not a JSON object');
  const { x402Version, paymentPayload: pp, paymentRequirements: req } = body;
  if (x402Version !== 1 && x402Version !== 2) throw new Invalid(Reason.version, `x402Version ${x402Version} is not 1 or 2`);
  if (!isObject(pp)) throw new Invalid(Reason.payload, 'paymentPayload is not an object');
  if (!isObject(req)) throw new Invalid(Reason.requirements, 'paymentRequirements is not an object');
  if (pp.x402Version !== x402Version) throw new Invalid(Reason.version, 'paymentPayload.x402Version differs from x402Version');

  // What the payer says it pays for: v1 names scheme and network in the payload, v2 copies the whole option.
  let paidScheme, paidNetwork;
  if (x402Version === 1) {
    paidScheme = pp.scheme;
    paidNetwork = pp.network;
  } else {
    if (!isObject(pp.accepted)) throw new Invalid(Reason.payload, 'paymentPayload.accepted is missing');
    paidScheme = pp.accepted.scheme;
    paidNetwork = pp.accepted.network;
  }
  if (x402Version === 2 && req.scheme === 'upto' && paidScheme === 'upto') return checkUpto(body, usedNonces, nowSeconds, phase);
  if (req.scheme !== 'exact' || paidScheme !== 'exact') throw new Invalid(Reason.scheme, `scheme ${paidScheme}/${req.scheme} is not exact`);
  if ((x402Version === 2 && req.network === SOLANA_DEVNET) || (x402Version === 1 && req.network === 'solana-devnet')) {
    if (paidNetwork !== req.network) throw new Invalid(Reason.network, `payment network ${paidNetwork} differs from required ${req.network}`);
    return checkSolana(pp, req, usedNonces, x402Version);
  }
  const chainId = chainIdFor(x402Version, req.network);
  if (chainId === undefined) throw new Invalid(Reason.network, `network ${req.network} is not served for x402 v${x402Version}`);
  if (paidNetwork !== req.network) throw new Invalid(Reason.network, `payment network ${paidNetwork} differs from required ${req.network}`);

  const amountField = x402Version === 1 ? 'maxAmountRequired' : 'amount';
  const required = req[amountField];
  if (!isUint(required)) throw new Invalid(Reason.requirements, `paymentRequirements.${amountField} is not an atomic amount`);
  if (typeof req.payTo !== 'string' || !isAddress(req.payTo, { strict: false })) throw new Invalid(Reason.requirements, 'paymentRequirements.payTo is not an EVM address');
  if (typeof req.asset !== 'string' || !isAddress(req.asset, { strict: false })) throw new Invalid(Reason.requirements, 'paymentRequirements.asset is not an EVM address');
  if (!isObject(req.extra) || typeof req.extra.name !== 'string' || typeof req.extra.version !== 'string') {
    throw new Invalid(Reason.requirements, 'paymentRequirements.extra lacks the EIP-712 name and version');
  }
  if (x402Version === 2) checkAccepted(pp.accepted, req);

  const inner = pp.payload;
  if (!isObject(inner) || !isObject(inner.authorization) || !isSignature(inner.signature)) {
    throw new Invalid(Reason.payload, 'payload needs signature and authorization');
  }
  const auth = inner.authorization;
  if (!isAddress(auth.from ?? '', { strict: false }) || !isAddress(auth.to ?? '', { strict: false })) throw new Invalid(Reason.payload, 'authorization from/to is not an address');
  for (const f of ['value', 'validAfter', 'validBefore']) {
    if (!isUint(auth[f])) throw new Invalid(Reason.payload, `authorization.${f} is not a decimal string`);
  }
  if (!isBytes32(auth.nonce)) throw new Invalid(Reason.payload, 'authorization.nonce is not 32 bytes of hex');
  const payer = getAddress(auth.from);

  let signed = false;
  try {
    signed = await verifyTypedData({
      address: payer,
      domain: { name: req.extra.name, version: req.extra.version, chainId, verifyingContract: getAddress(req.asset) },
      types: transferWithAuthorizationTypes,
      primaryType: 'TransferWithAuthorization',
      message: {
        from: payer,
        to: getAddress(auth.to),
        value: BigInt(auth.value),
        validAfter: BigInt(auth.validAfter),
        validBefore: BigInt(auth.validBefore),
        nonce: auth.nonce,
      },
      signature: inner.signature,
    });
  } catch {
    signed = false; // a signature that cannot even be parsed is simply not a valid one
  }
  if (!signed) throw withPayer(new Invalid(Reason.signature, 'signature does not recover to authorization.from'), payer);
  if (getAddress(auth.to) !== getAddress(req.payTo)) throw withPayer(new Invalid(Reason.recipient, `authorization.to ${auth.to} is not payTo ${req.payTo}`), payer);
  const now = BigInt(nowSeconds);
  if (BigInt(auth.validBefore) < now + minValiditySeconds) throw withPayer(new Invalid(Reason.validBefore, `validBefore ${auth.validBefore} is before now+6 (${now + minValiditySeconds})`), payer);
  if (BigInt(auth.validAfter) > now) throw withPayer(new Invalid(Reason.validAfter, `validAfter ${auth.validAfter} is in the future`), payer);
  if (BigInt(auth.value) !== BigInt(required)) throw withPayer(new Invalid(Reason.value, `value ${auth.value} is not the required ${required}`), payer);
  const nonceKey = `${chainId}:${getAddress(req.asset)}:${payer}:${auth.nonce.toLowerCase()}`;
  if (usedNonces.has(nonceKey)) throw withPayer(new Invalid(Reason.nonceUsed, `nonce ${auth.nonce} was already settled`), payer);
  return { payer, network: req.network, payTo: getAddress(req.payTo), amount: required, asset: getAddress(req.asset), nonce: auth.nonce, nonceKey, x402Version };
}

// checkSolana is checkPayment for a Solana payment: the v2 accepted copy as for EVM, then lib/solana.mjs's
// checks against the seller's requirements (the amount is maxAmountRequired in v1); the settled-once key is
// the message's hash.
async function checkSolana(pp, req, usedNonces, x402Version) {
  if (x402Version === 2) checkAccepted(pp.accepted, req);
  const feePayer = (await feePayerSigner()).address;
  let p;
  try {
    p = await checkSvmPayment(pp.payload, req, x402Version === 1 ? 'maxAmountRequired' : 'amount', [feePayer]);
  } catch (err) {
    if (err instanceof SvmInvalid) throw withPayer(new Invalid(err.reason, err.message), err.payer);
    throw err;
  }
  const nonceKey = `${req.network}:${p.messageKey}`;
  if (usedNonces.has(nonceKey)) throw withPayer(new Invalid(SvmReason.duplicate, 'this transaction was already settled'), p.payer);
  return { payer: p.payer, network: req.network, payTo: req.payTo, amount: p.amount, asset: req.asset, nonce: p.messageKey, nonceKey, x402Version, svm: p };
}

/**
 * checkUpto validates a v2 upto payment (a Permit2 witness transfer) offline. At verify the requirements'
 * amount is the maximum and must equal the permitted amount; at settle it is the amount to charge, at most
 * the permitted one (specs/schemes/upto/scheme_upto.md §5).
 */
async function checkUpto(body, usedNonces, nowSeconds, phase) {
  const { paymentPayload: pp, paymentRequirements: req } = body;
  const chainId = chainIdFor(2, req.network);
  if (chainId === undefined) throw new Invalid(Reason.network, `network ${req.network} is not served for upto`);
  if (pp.accepted.network !== req.network) throw new Invalid(Reason.network, `payment network ${pp.accepted.network} differs from required ${req.network}`);
  if (!isUint(req.amount)) throw new Invalid(Reason.requirements, 'paymentRequirements.amount is not an atomic amount');
  if (typeof req.payTo !== 'string' || !isAddress(req.payTo, { strict: false })) throw new Invalid(Reason.requirements, 'paymentRequirements.payTo is not an EVM address');
  if (typeof req.asset !== 'string' || !isAddress(req.asset, { strict: false })) throw new Invalid(Reason.requirements, 'paymentRequirements.asset is not an EVM address');
  // The seller's copy of the option: at settle its amount is the usage, so only the other fields must agree.
  checkAccepted(phase === 'settle' ? { ...pp.accepted, amount: req.amount } : pp.accepted, req);
  const inner = pp.payload;
  const a = inner?.permit2Authorization;
  if (!isObject(inner) || !isObject(a) || !isSignature(inner.signature) || !isObject(a.permitted) || !isObject(a.witness)) {
    throw new Invalid(Reason.payload, 'payload needs signature and permit2Authorization {permitted, witness}');
  }
  for (const f of ['from', 'spender']) if (!isAddress(a[f] ?? '', { strict: false })) throw new Invalid(Reason.payload, `permit2Authorization.${f} is not an address`);
  for (const f of ['to', 'facilitator']) if (!isAddress(a.witness[f] ?? '', { strict: false })) throw new Invalid(Reason.payload, `witness.${f} is not an address`);
  if (!isAddress(a.permitted.token ?? '', { strict: false })) throw new Invalid(Reason.payload, 'permitted.token is not an address');
  for (const [name, v] of [['permitted.amount', a.permitted.amount], ['nonce', a.nonce], ['deadline', a.deadline], ['witness.validAfter', a.witness.validAfter]]) {
    if (!isUint(v)) throw new Invalid(Reason.payload, `permit2Authorization.${name} is not a decimal string`);
  }
  const payer = getAddress(a.from);
  const fail = (reason, message) => withPayer(new Invalid(reason, message), payer);
  if (getAddress(a.spender) !== getAddress(x402UptoPermit2ProxyAddress)) throw fail(Reason.permit2Spender, `spender ${a.spender} is not the upto proxy`);
  if (getAddress(a.witness.to) !== getAddress(req.payTo)) throw fail(Reason.permit2Recipient, `witness.to ${a.witness.to} is not payTo ${req.payTo}`);
  if (getAddress(a.witness.facilitator) !== FACILITATOR_SIGNER) throw fail(Reason.uptoFacilitator, `witness.facilitator ${a.witness.facilitator} is not this facilitator`);
  const now = BigInt(nowSeconds);
  if (BigInt(a.deadline) < now + minValiditySeconds) throw fail(Reason.permit2Deadline, `deadline ${a.deadline} is before now+6`);
  if (BigInt(a.witness.validAfter) > now) throw fail(Reason.permit2NotYetValid, `validAfter ${a.witness.validAfter} is in the future`);
  if (getAddress(a.permitted.token) !== getAddress(req.asset)) throw fail(Reason.permit2Token, `permitted.token ${a.permitted.token} is not the asset`);
  const maximum = BigInt(a.permitted.amount);
  if (phase === 'settle') {
    if (BigInt(req.amount) > maximum) throw fail(Reason.uptoExceeds, `settlement ${req.amount} exceeds the authorized ${maximum}`);
  } else if (BigInt(req.amount) !== maximum) {
    throw fail(Reason.permit2Amount, `permitted.amount ${maximum} is not the required ${req.amount}`);
  }
  let signed = false;
  try {
    signed = await verifyTypedData({
      address: payer,
      domain: { name: 'Permit2', chainId, verifyingContract: PERMIT2_ADDRESS },
      types: uptoPermit2WitnessTypes,
      primaryType: 'PermitWitnessTransferFrom',
      message: {
        permitted: { token: getAddress(a.permitted.token), amount: maximum },
        spender: getAddress(a.spender),
        nonce: BigInt(a.nonce),
        deadline: BigInt(a.deadline),
        witness: { to: getAddress(a.witness.to), facilitator: getAddress(a.witness.facilitator), validAfter: BigInt(a.witness.validAfter) },
      },
      signature: inner.signature,
    });
  } catch {
    signed = false;
  }
  if (!signed) throw fail(Reason.permit2Signature, 'signature does not recover to permit2Authorization.from');
  const nonceKey = `permit2:${chainId}:${payer}:${BigInt(a.nonce)}`;
  if (usedNonces.has(nonceKey)) throw fail(Reason.nonceUsed, `Permit2 nonce ${a.nonce} was already settled`);
  return { payer, network: req.network, payTo: getAddress(req.payTo), amount: req.amount, maximum: String(maximum), asset: getAddress(req.asset), nonce: a.nonce, nonceKey, x402Version: 2, scheme: 'upto' };
}

function withPayer(err, payer) {
  err.payer = payer;
  return err;
}

// checkAccepted compares the v2 payload's copy of the chosen option with the requirements the seller sends,
// the way the SDK seller matches them: core fields exactly, extra as a subset.
function checkAccepted(accepted, req) {
  for (const f of ['scheme', 'network', 'amount', 'asset', 'payTo', 'maxTimeoutSeconds']) {
    if (accepted[f] !== req[f]) throw new Invalid(Reason.requirements, `accepted.${f} ${JSON.stringify(accepted[f])} differs from the requirements' ${JSON.stringify(req[f])}`);
  }
  if (isObject(accepted.extra)) {
    for (const [k, v] of Object.entries(accepted.extra)) {
      if (JSON.stringify(req.extra?.[k]) !== JSON.stringify(v)) throw new Invalid(Reason.requirements, `accepted.extra.${k} differs from the requirements`);
    }
  }
}

function newStats() {
  return {
    verify: { calls: 0, valid: 0, invalid: 0 },
    settle: { calls: 0, success: 0, failure: 0, held: 0, abandoned: 0 },
    outageRejected: 0,
    reasons: {},
    settled: [],
    supportedCalls: 0,
  };
}

/**
 * createFacilitator builds the facilitator's request handler and state. now() returns Unix seconds.
 */
export function createFacilitator({ now = () => Math.floor(Date.now() / 1000) } = {}) {
  const state = { usedNonces: new Set(), stats: newStats(), outage: false, txCounter: 0, forge: {}, hold: null };

  const supported = async () => {
    const feePayer = (await feePayerSigner()).address;
    return {
      kinds: [
        ...Object.keys(V2_NETWORKS).map((network) => ({ x402Version: 2, scheme: 'exact', network })),
        ...Object.keys(V1_NETWORKS).map((network) => ({ x402Version: 1, scheme: 'exact', network })),
        // upto binds the facilitator allowed to settle: the seller's SDK copies this into extra.facilitatorAddress.
        ...Object.keys(V2_NETWORKS).map((network) => ({ x402Version: 2, scheme: 'upto', network, extra: { facilitatorAddress: FACILITATOR_SIGNER } })),
        // Solana: the fee payer, which sellers copy into extra.feePayer.
        { x402Version: 2, scheme: 'exact', network: SOLANA_DEVNET, extra: { feePayer } },
        { x402Version: 1, scheme: 'exact', network: 'solana-devnet', extra: { feePayer } },
      ],
      extensions: [],
      signers: { 'eip155:*': [FACILITATOR_SIGNER], 'solana:*': [feePayer] },
    };
  };

  async function verify(body) {
    state.stats.verify.calls++;
    try {
      const p = await checkPayment(body, state.usedNonces, now());
      state.stats.verify.valid++;
      return { isValid: true, payer: p.payer };
    } catch (err) {
      if (!(err instanceof Invalid)) throw err;
      state.stats.verify.invalid++;
      state.stats.reasons[err.reason] = (state.stats.reasons[err.reason] ?? 0) + 1;
      return { isValid: false, invalidReason: err.reason, invalidMessage: err.message, ...(err.payer ? { payer: err.payer } : {}) };
    }
  }

  async function settle(body) {
    state.stats.settle.calls++;
    const network = body?.paymentRequirements?.network ?? '';
    try {
      const p = await checkPayment(body, state.usedNonces, now(), 'settle');
      // Check again and mark with no await in between: two concurrent settles of one nonce cannot both pass.
      if (state.usedNonces.has(p.nonceKey)) throw withPayer(new Invalid(Reason.nonceUsed, `nonce ${p.nonce} was already settled`), p.payer);
      state.usedNonces.add(p.nonceKey);
      state.txCounter++;
      // Solana: the fee payer's signature over the message completes the transaction and is its id.
      const transaction = p.svm ? await cosign(p.svm.messageBytes) : keccak256(toHex(`payguard-interop-tx:${state.txCounter}:${p.nonceKey}`));
      state.stats.settle.success++;
      state.stats.settled.push({
        x402Version: p.x402Version, network: p.network, payTo: p.payTo, amount: p.amount, asset: p.asset,
        payer: p.payer, nonce: p.nonce, transaction, resource: body.paymentRequirements.resource ?? body.paymentPayload.resource?.url,
        ...(p.scheme === 'upto' ? { scheme: 'upto', maximum: p.maximum } : {}),
      });
      if (p.scheme === 'upto') {
        // A zero settlement moves nothing and has no transaction (scheme_upto_evm.md, Phase 4).
        const amount = state.forge.uptoAmount ?? p.amount;
        state.forge = {};
        return { success: true, payer: p.payer, transaction: p.amount === '0' ? '' : transaction, network: p.network, amount };
      }
      return { success: true, payer: p.payer, transaction, network: p.network };
    } catch (err) {
      if (!(err instanceof Invalid)) throw err;
      state.stats.settle.failure++;
      state.stats.reasons[err.reason] = (state.stats.reasons[err.reason] ?? 0) + 1;
      return { success: false, errorReason: err.reason, errorMessage: err.message, transaction: '', network, ...(err.payer ? { payer: err.payer } : {}) };
    }
  }

  async function handle(req, res) {
    const url = new URL(req.url, 'http://facilitator');
    const route = `${req.method} ${url.pathname}`;
    try {
      switch (route) {
        case 'GET /supported':
          state.stats.supportedCalls++;
          return send(res, 200, await supported());
        case 'GET /health':
          return send(res, 200, { ok: true });
        case 'GET /_stats':
          return send(res, 200, { ...state.stats, outage: state.outage, usedNonces: state.usedNonces.size });
        case 'POST /_reset':
          await readJSON(req);
          state.usedNonces.clear();
          state.stats = newStats();
          state.forge = {};
          state.outage = false;
          state.hold?.release();
          state.hold = null;
          return send(res, 200, { ok: true });
        case 'POST /_hold_settle': {
          const body = await readJSON(req);
          if (body?.on === true && !state.hold) {
            let release;
            const released = new Promise((r) => { release = r; });
            state.hold = { released, release };
          } else if (body?.on !== true && state.hold) {
            state.hold.release();
            state.hold = null;
          }
          return send(res, 200, { hold: state.hold !== null });
        }
        case 'POST /_forge': {
          const body = await readJSON(req);
          state.forge = isObject(body) && typeof body.uptoAmount === 'string' ? { uptoAmount: body.uptoAmount } : {};
          return send(res, 200, state.forge);
        }
        case 'POST /_outage': {
          const body = await readJSON(req);
          state.outage = body?.on === true;
          return send(res, 200, { outage: state.outage });
        }
        case 'POST /verify':
        case 'POST /settle': {
          const body = await readJSON(req);
          if (state.outage) {
            state.stats.outageRejected++;
            res.writeHead(503, { 'content-type': 'text/plain' });
            return res.end('facilitator outage (test hook)\n');
          }
          if (body === undefined) return send(res, 400, route === 'POST /verify'
            ? { isValid: false, invalidReason: Reason.payload, invalidMessage: 'body is not JSON' }
            : { success: false, errorReason: Reason.payload, errorMessage: 'body is not JSON', transaction: '', network: '' });
          if (route === 'POST /settle' && state.hold) {
            state.stats.settle.held++;
            res.on('close', () => { if (!res.writableFinished) state.stats.settle.abandoned++; });
            await state.hold.released;
          }
          return send(res, 200, route === 'POST /verify' ? await verify(body) : await settle(body));
        }
        default:
          return send(res, 404, { error: `no route ${route}` });
      }
    } catch (err) {
      return send(res, 500, { error: String(err?.message ?? err) });
    }
  }

  return { handle, state, supported };
}

// readJSON reads a bounded body; it returns undefined for an empty or non-JSON body.
async function readJSON(req) {
  const chunks = [];
  let size = 0;
  for await (const c of req) {
    size += c.length;
    if (size > maxBodyBytes) throw new Error('body too large');
    chunks.push(c);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function send(res, status, obj) {
  const body = JSON.stringify(obj);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

/**
 * startFacilitator listens on host:port (port 0 picks a free one) and resolves to
 * {url, port, state, close()}.
 */
export async function startFacilitator({ port = 0, host = '127.0.0.1', now } = {}) {
  const f = createFacilitator({ now });
  const server = http.createServer((req, res) => { f.handle(req, res); });
  server.keepAliveTimeout = 1000;
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, resolve);
  });
  const actual = server.address().port;
  return {
    url: `http://${host}:${actual}`,
    port: actual,
    state: f.state,
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}

async function main() {
  const { values } = parseArgs({ options: { port: { type: 'string', default: '4020' }, host: { type: 'string', default: '127.0.0.1' } } });
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    console.error(`facilitator: --port ${values.port} is not a port number`);
    process.exit(2);
  }
  const f = await startFacilitator({ port, host: values.host });
  console.log(JSON.stringify({ ready: true, role: 'facilitator', url: f.url, port: f.port }));
  const stop = () => f.close().then(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  main().catch((err) => {
    console.error(`facilitator: ${err?.message ?? err}`);
    process.exit(1);
  });
}
