// Solana for the interop tests, offline: fixed wallets, a loopback stand-in for the JSON-RPC methods the
// official @x402/svm client calls (getAccountInfo for the mint, getLatestBlockhash), and the checks the local
// facilitator makes of an SVM "exact" payment (what the official facilitator checks before it co-signs,
// minus the chain: the payer's signature over the message, the instruction layout, the transfer's amount,
// mint and destination, the fee payer, and a message settled at most once).
//
// Only @solana/kit is used (the official client's own library), never payguard's Go reader: the two must
// agree because each follows the protocol, not because one copies the other.

import http from 'node:http';
import crypto from 'node:crypto';
import {
  compileTransaction, createKeyPairSignerFromPrivateKeyBytes, decompileTransactionMessage, getBase64EncodedWireTransaction,
  partiallySignTransaction, getAddressEncoder, getBase58Decoder,
  getBase64Encoder, getCompiledTransactionMessageDecoder, getProgramDerivedAddress, getTransactionDecoder,
  signBytes, verifySignature,
} from '@solana/kit';
import { ExactSvmScheme } from '@x402/svm/exact/client';

export const SOLANA_DEVNET = 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1';
export const USDC_DEVNET = '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU';
export const TOKEN_PROGRAM = 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA';
export const TOKEN_2022_PROGRAM = 'TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb';
export const ATA_PROGRAM = 'ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL';
export const COMPUTE_BUDGET_PROGRAM = 'ComputeBudget111111111111111111111111111111';
export const MEMO_PROGRAM = 'MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr';
export const LIGHTHOUSE_PROGRAM = 'L2TExMFKdjpN9kozasaurPirfHy9P8sbXoAN1qA3S95';
const MAX_COMPUTE_UNIT_PRICE = 5_000_000n; // micro-lamports, the official facilitator's bound

// Fixed test keys (32-byte ed25519 seeds): never funded anywhere, only for signatures checked here.
const seed = (label) => crypto.createHash('sha256').update(`payguard-interop-solana:${label}`).digest();
export const signerFor = (label) => createKeyPairSignerFromPrivateKeyBytes(seed(label));
/** The buyer's wallet, the seller's payees and the facilitator's fee payer. */
export const buyerSigner = () => signerFor('buyer');
export const sellerSigner = () => signerFor('seller');
export const altSellerSigner = () => signerFor('alt-seller');
export const feePayerSigner = () => signerFor('fee-payer');

/** ata derives owner's associated token account for mint under a token program, with @solana/kit. */
export async function ata(owner, mint, tokenProgram = TOKEN_PROGRAM) {
  const enc = getAddressEncoder();
  const [address] = await getProgramDerivedAddress({
    programAddress: ATA_PROGRAM, seeds: [enc.encode(owner), enc.encode(tokenProgram), enc.encode(mint)],
  });
  return address;
}

// mintAccount is the 82-byte SPL Mint layout: mint authority (COption), supply, decimals, initialized,
// freeze authority (COption).
function mintAccount(decimals) {
  const b = Buffer.alloc(82);
  b.writeBigUInt64LE(1_000_000_000_000n, 36);
  b[44] = decimals;
  b[45] = 1;
  return b.toString('base64');
}

/**
 * startSolanaRpc serves the JSON-RPC methods the official clients ask on 127.0.0.1: getAccountInfo (the
 * mints in `mints`, {address: {program, decimals}}; USDC devnet under Token by default), getLatestBlockhash
 * (a fresh random blockhash per call) and simulateTransaction (success, 6000 units: the legacy client's
 * compute estimate). Resolves to {url, calls, blockhashes, close()}.
 */
export async function startSolanaRpc({ mints = { [USDC_DEVNET]: { program: TOKEN_PROGRAM, decimals: 6 } } } = {}) {
  const calls = [];
  const blockhashes = [];
  const b58 = getBase58Decoder();
  const server = http.createServer(async (req, res) => {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    let msg;
    try {
      msg = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      res.writeHead(400).end();
      return;
    }
    calls.push(msg.method);
    const ctx = { apiVersion: '2.2.0', slot: 1000 };
    let result;
    let error;
    switch (msg.method) {
      case 'getLatestBlockhash': {
        const blockhash = b58.decode(crypto.randomBytes(32));
        blockhashes.push(blockhash);
        result = { context: ctx, value: { blockhash, lastValidBlockHeight: 1150 } };
        break;
      }
      case 'getAccountInfo': {
        const m = mints[msg.params?.[0]];
        result = {
          context: ctx,
          value: m ? { data: [mintAccount(m.decimals), 'base64'], executable: false, lamports: 1461600, owner: m.program, rentEpoch: 0, space: 82 } : null,
        };
        break;
      }
      case 'simulateTransaction': // the legacy x402 client estimates its compute unit limit this way
        result = { context: ctx, value: { err: null, logs: [], accounts: null, unitsConsumed: 6000, returnData: null } };
        break;
      default:
        error = { code: -32601, message: `method ${msg.method} is not served by the interop stand-in` };
    }
    const body = JSON.stringify(error ? { jsonrpc: '2.0', id: msg.id, error } : { jsonrpc: '2.0', id: msg.id, result });
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    calls,
    blockhashes,
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}

/** SvmReason: the official facilitator's error strings (@x402/svm 2.27.0, exact/facilitator/errors). */
export const SvmReason = Object.freeze({
  decode: 'invalid_exact_svm_payload_transaction_could_not_be_decoded',
  feePayerMissing: 'invalid_exact_svm_payload_missing_fee_payer',
  feePayerNotManaged: 'invalid_exact_svm_fee_payer_not_managed_by_facilitator',
  feePayerMismatch: 'invalid_exact_svm_fee_payer_mismatch',
  signature: 'invalid_exact_svm_payload_signature_invalid',
  length: 'invalid_exact_svm_payload_transaction_instructions_length',
  computeLimit: 'invalid_exact_svm_payload_transaction_instructions_compute_limit_instruction',
  computePrice: 'invalid_exact_svm_payload_transaction_instructions_compute_price_instruction',
  computePriceHigh: 'invalid_exact_svm_payload_transaction_instructions_compute_price_instruction_too_high',
  noTransfer: 'invalid_exact_svm_payload_no_transfer_instruction',
  feePayerTransferring: 'invalid_exact_svm_payload_transaction_fee_payer_transferring_funds',
  mint: 'invalid_exact_svm_payload_mint_mismatch',
  recipient: 'invalid_exact_svm_payload_recipient_mismatch',
  amount: 'invalid_exact_svm_payload_amount_mismatch',
  unknownInstruction: 'invalid_exact_svm_payload_unknown_optional_instruction',
  memoCount: 'invalid_exact_svm_payload_memo_count',
  memoMismatch: 'invalid_exact_svm_payload_memo_mismatch',
  duplicate: 'duplicate_settlement',
});

/** SvmInvalid is a failed SVM check: the reason string and a message. */
export class SvmInvalid extends Error {
  constructor(reason, message, payer) {
    super(message);
    this.reason = reason;
    this.payer = payer;
  }
}

const u64le = (data, off) => Buffer.from(data).readBigUInt64LE(off);

/**
 * checkSvmPayment checks an SVM exact payment offline against the requirements the seller sent (`amount`
 * in v2, `maxAmountRequired` in v1), as the official facilitator's static path does, and returns
 * {payer, amount, messageKey}. feePayers are the addresses this facilitator signs for.
 */
export async function checkSvmPayment(payload, req, amountField, feePayers) {
  const feePayer = req.extra?.feePayer;
  if (typeof feePayer !== 'string' || feePayer === '') throw new SvmInvalid(SvmReason.feePayerMissing, 'requirements name no extra.feePayer');
  if (!feePayers.includes(feePayer)) throw new SvmInvalid(SvmReason.feePayerNotManaged, `fee payer ${feePayer} is not this facilitator's`);
  let tx;
  let compiled;
  let instructions;
  try {
    tx = getTransactionDecoder().decode(getBase64Encoder().encode(payload?.transaction));
    compiled = getCompiledTransactionMessageDecoder().decode(tx.messageBytes);
    instructions = decompileTransactionMessage(compiled).instructions ?? [];
  } catch (err) {
    throw new SvmInvalid(SvmReason.decode, `transaction unreadable: ${err.message}`);
  }
  if (String(compiled.staticAccounts[0]) !== feePayer) throw new SvmInvalid(SvmReason.feePayerMismatch, 'the transaction\'s fee payer is not extra.feePayer');
  const enc = getAddressEncoder();
  for (let i = 1; i < compiled.header.numSignerAccounts; i++) {
    const addr = String(compiled.staticAccounts[i]);
    const sig = tx.signatures[addr];
    let ok = false;
    try {
      const key = await crypto.subtle.importKey('raw', enc.encode(addr), 'Ed25519', false, ['verify']);
      ok = !!sig && (await verifySignature(key, sig, tx.messageBytes));
    } catch {
      ok = false;
    }
    if (!ok) throw new SvmInvalid(SvmReason.signature, `signer ${addr} has no valid signature over the message`);
  }
  if (instructions.length < 3 || instructions.length > 7) throw new SvmInvalid(SvmReason.length, `${instructions.length} instructions`);
  const [limit, price, transfer, ...optional] = instructions;
  if (String(limit.programAddress) !== COMPUTE_BUDGET_PROGRAM || limit.data?.[0] !== 2 || limit.data.length !== 5) throw new SvmInvalid(SvmReason.computeLimit, 'instruction 0 is not SetComputeUnitLimit');
  if (String(price.programAddress) !== COMPUTE_BUDGET_PROGRAM || price.data?.[0] !== 3 || price.data.length !== 9) throw new SvmInvalid(SvmReason.computePrice, 'instruction 1 is not SetComputeUnitPrice');
  if (u64le(price.data, 1) > MAX_COMPUTE_UNIT_PRICE) throw new SvmInvalid(SvmReason.computePriceHigh, 'compute unit price too high');
  const program = String(transfer.programAddress);
  const accounts = transfer.accounts ?? [];
  if ((program !== TOKEN_PROGRAM && program !== TOKEN_2022_PROGRAM) || transfer.data?.[0] !== 12 || transfer.data.length < 10 || accounts.length < 4) {
    throw new SvmInvalid(SvmReason.noTransfer, 'instruction 2 is not a TransferChecked');
  }
  const payer = String(accounts[3].address);
  if (feePayers.includes(payer)) throw new SvmInvalid(SvmReason.feePayerTransferring, 'the fee payer would transfer its own funds', payer);
  if (String(accounts[1].address) !== req.asset) throw new SvmInvalid(SvmReason.mint, `mint ${accounts[1].address} is not ${req.asset}`, payer);
  const dest = await ata(req.payTo, req.asset, program);
  if (String(accounts[2].address) !== dest) throw new SvmInvalid(SvmReason.recipient, `destination ${accounts[2].address} is not payTo's token account ${dest}`, payer);
  const amount = u64le(transfer.data, 1);
  if (amount !== BigInt(req[amountField])) throw new SvmInvalid(SvmReason.amount, `amount ${amount} is not ${req[amountField]}`, payer);
  for (const ix of optional) {
    const p = String(ix.programAddress);
    if (p !== MEMO_PROGRAM && p !== LIGHTHOUSE_PROGRAM) throw new SvmInvalid(SvmReason.unknownInstruction, `optional instruction calls ${p}`, payer);
  }
  if (req.extra?.memo) {
    const memos = optional.filter((ix) => String(ix.programAddress) === MEMO_PROGRAM);
    if (memos.length !== 1) throw new SvmInvalid(SvmReason.memoCount, `${memos.length} memos`, payer);
    if (Buffer.from(memos[0].data ?? []).toString('utf8') !== req.extra.memo) throw new SvmInvalid(SvmReason.memoMismatch, 'memo differs', payer);
  }
  const messageKey = crypto.createHash('sha256').update(tx.messageBytes).digest('hex');
  return { payer, amount: String(amount), payTo: req.payTo, asset: req.asset, messageKey, messageBytes: tx.messageBytes };
}

/** cosign signs a message with the fee payer's key, as the facilitator does at settlement: the signature
 * (Base58) is the transaction's id. */
export async function cosign(messageBytes) {
  const signer = await feePayerSigner();
  return getBase58Decoder().decode(await signBytes(signer.keyPair.privateKey, messageBytes));
}

/**
 * addInstruction returns the base64 transaction with one more instruction appended (instructionAt(message)
 * gives it from the decompiled message), compiled again and signed again by signer: a payment whose
 * signature is valid but which does more than it names.
 */
export async function addInstruction(transactionB64, signer, instructionAt) {
  const tx = getTransactionDecoder().decode(getBase64Encoder().encode(transactionB64));
  const message = decompileTransactionMessage(getCompiledTransactionMessageDecoder().decode(tx.messageBytes));
  const changed = { ...message, instructions: [...message.instructions, await instructionAt(message)] };
  const signed = await partiallySignTransaction([signer.keyPair], compileTransaction(changed));
  return getBase64EncodedWireTransaction(signed);
}

/** svmClientScheme is the official @x402/svm client scheme for signer, asking the RPC at rpcUrl: for suites
 * outside interop/ (clients/js) that resolve their packages elsewhere. */
export function svmClientScheme(signer, rpcUrl) {
  return new ExactSvmScheme(signer, { rpcUrl });
}
