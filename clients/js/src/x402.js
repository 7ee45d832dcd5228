// The x402 facts the policy needs, as the Go engine's x402 package derives them: network names (v1 names and
// CAIP-2), the known USDC contracts, atomic amounts and address forms. Tables copied from x402/networks.go and
// x402/assets.go; the decision vectors (testdata/vectors/decisions.json) check that they agree.

export const SOLANA_MAINNET = 'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp';
export const SOLANA_DEVNET = 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1';
export const SOLANA_TESTNET = 'solana:4uhcVJyU9pJkvQyS88uRDiswHXSCkY3z';

const V1_EVM_CHAIN_IDS = {
  'abstract-testnet': 11124, celo: 42220, monad: 143, megaeth: 4326, stable: 988, 'stable-testnet': 2201,
  flare: 14, base: 8453, 'base-sepolia': 84532, avalanche: 43114, 'avalanche-fuji': 43113, polygon: 137,
  'polygon-amoy': 80002, sei: 1329, 'sei-testnet': 1328, iotex: 4689, abstract: 2741, peaq: 3338, story: 1514,
  educhain: 41923, 'skale-base-sepolia': 324705682, ethereum: 1, sepolia: 11155111,
};
const V1_NON_EVM = { solana: SOLANA_MAINNET, 'solana-devnet': SOLANA_DEVNET, 'solana-testnet': SOLANA_TESTNET };
const CAIP2_TO_V1 = new Map([
  ...Object.entries(V1_EVM_CHAIN_IDS).map(([name, id]) => [`eip155:${id}`, name]),
  ...Object.entries(V1_NON_EVM).map(([name, id]) => [id, name]),
]);
const has = (o, k) => Object.prototype.hasOwnProperty.call(o, k);

/** USDC contracts the official SDKs pay with (6 decimals), by CAIP-2 network. */
export const KNOWN_USDC = new Map([
  ['eip155:8453', '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913'],
  ['eip155:84532', '0x036CbD53842c5426634e7929541eC2318f3dCF7e'],
  ['eip155:1', '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48'],
  ['eip155:137', '0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359'],
  ['eip155:80002', '0x41E94Eb019C0762f9Bfcf9Fb1E58725BfB0e7582'],
  ['eip155:43114', '0xB97EF9Ef8734C71904D8002F8b6Bc66Dd9c48a6E'],
  ['eip155:43113', '0x5425890298aed601595a70AB815c96711a31Bc65'],
  ['eip155:42161', '0xaf88d065e77c8cC2239327C5EDb3A432268e5831'],
  ['eip155:421614', '0x75faf114eafb1BDbe2F0316DF893fd58CE46AA4d'],
  ['eip155:143', '0x754704Bc059F8C67012fEd69BC8A327a5aafb603'],
  ['eip155:1329', '0xe15fC38F6D8c56aF07bbCBe3BAf5708A2Bf42392'],
  ['eip155:1328', '0x4fCF1784B31630811181f670Aea7A7bEF803eaED'],
  ['eip155:42220', '0xcebA9300f2b948710d2653dD7B07f33A8B32118C'],
  [SOLANA_MAINNET, 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v'],
  [SOLANA_DEVNET, '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU'],
  [SOLANA_TESTNET, '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU'],
]);

/** CAIP-2 grammar; an eip155 reference must be a canonical decimal chain id. */
function wellFormedCAIP2(s) {
  const i = s.indexOf(':');
  if (i < 0) return false;
  const ns = s.slice(0, i), ref = s.slice(i + 1);
  if (!/^[-a-z0-9]{3,8}$/.test(ns) || !/^[-_a-zA-Z0-9]{1,32}$/.test(ref)) return false;
  if (ns === 'eip155') return /^[1-9]\d*$/.test(ref) && BigInt(ref) < 1n << 64n;
  return true;
}

/** caip2 maps a wire network name to CAIP-2, or returns undefined. */
export function caip2(network) {
  if (has(V1_EVM_CHAIN_IDS, network)) return `eip155:${V1_EVM_CHAIN_IDS[network]}`;
  if (has(V1_NON_EVM, network)) return V1_NON_EVM[network];
  return wellFormedCAIP2(network) ? network : undefined;
}

/** v1Name is the v1 name of a CAIP-2 id, or undefined. */
export const v1Name = (id) => CAIP2_TO_V1.get(id);

export function isEVMNetwork(network) {
  return has(V1_EVM_CHAIN_IDS, network) || (network.startsWith('eip155:') && wellFormedCAIP2(network));
}

/** isSolanaNetwork: a well-formed solana:<cluster> or a v1 Solana name (x402.IsSolanaNetwork). */
export function isSolanaNetwork(network) {
  const id = caip2(network);
  return id !== undefined && id.startsWith('solana:');
}

const BASE58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

/** isSolanaAddress: Base58 text of exactly 32 bytes, at most 44 characters (x402.IsSolanaAddress). */
export function isSolanaAddress(s) {
  if (typeof s !== 'string' || s === '' || s.length > 44) return false;
  let n = 0n;
  for (const c of s) {
    const d = BASE58.indexOf(c);
    if (d < 0) return false;
    n = n * 58n + BigInt(d);
  }
  let bytes = 0;
  for (let v = n; v > 0n; v >>= 8n) bytes++;
  const zeros = s.length - s.replace(/^1+/, '').length; // each leading '1' is a zero byte
  return zeros + bytes === 32;
}

/** isEVMAddress: "0x" and 40 hex digits (x402.IsEVMAddress: lower-case x only). */
export const isEVMAddress = (s) => typeof s === 'string' && /^0x[0-9a-fA-F]{40}$/.test(s);

export function sameAddress(a, b) {
  return isEVMAddress(a) && isEVMAddress(b) ? a.toLowerCase() === b.toLowerCase() : a === b;
}

/** isKnownUSDC reports whether asset is the known USDC contract on network (a v1 name or CAIP-2). */
export function isKnownUSDC(network, asset) {
  const id = caip2(network);
  const usdc = id && KNOWN_USDC.get(id);
  return Boolean(usdc) && sameAddress(usdc, asset);
}

/** MAX_ATOMIC is the largest atomic amount accepted (x402.MaxAtomic). */
export const MAX_ATOMIC = 1_000_000_000_000_000_000n;

/**
 * parseAtomic reads an atomic amount as x402.ParseAtomic does: ASCII digits only (leading zeros allowed).
 * @returns {{ok: true, value: bigint} | {ok: false, problem: 'malformed'|'oversized'|'negative'}}
 */
export function parseAtomic(s) {
  if (typeof s !== 'string' || s === '') return { ok: false, problem: 'malformed' };
  if (s[0] === '-') return { ok: false, problem: 'negative' };
  if (!/^\d+$/.test(s)) return { ok: false, problem: 'malformed' };
  const v = BigInt(s);
  return v > MAX_ATOMIC ? { ok: false, problem: 'oversized' } : { ok: true, value: v };
}
