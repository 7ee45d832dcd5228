// payguard's in-process guard for x402 agents: the payment rules of the payguard proxy, decided in the
// official x402 client's before-payment-creation hook, before anything is signed. See README.md.

export { Guard, PaymentRefusedError, createGuard, feeGuard, guard } from './guard.js';
export { guardV1Fetch } from './v1.js';
export { ReceiptError, RECEIPT_TYPE, verifyJWS, verifyReceipt } from './receipt.js';
export { defaultRules, normalizeRules, RULE_NAMES } from './rules.js';
export { decideChallenge } from './decide.js';
export { formatUSD, parseUSD } from './usd.js';
