// Network and asset facts the harness needs: which EVM networks the local facilitator serves, their chain ids
// in both naming schemes (v1 names, v2 CAIP-2), and the USDC contract each SDK picks for a "$" price.

/** The v1 network names the facilitator supports, with their EVM chain ids. */
export const V1_NETWORKS = Object.freeze({ base: 8453, 'base-sepolia': 84532 });

/** The v2 (CAIP-2) network ids the facilitator supports, with their EVM chain ids. */
export const V2_NETWORKS = Object.freeze({ 'eip155:8453': 8453, 'eip155:84532': 84532 });

/** USDC on each supported chain: the asset both SDKs choose for a "$" price, and its EIP-712 domain. */
export const USDC = Object.freeze({
  8453: { address: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913', name: 'USD Coin', version: '2' },
  84532: { address: '0x036CbD53842c5426634e7929541eC2318f3dCF7e', name: 'USDC', version: '2' },
});

/**
 * chainIdFor returns the EVM chain id of a network for the given x402 version, or undefined when the
 * facilitator does not serve that (version, network) pair. v1 only speaks names and v2 only CAIP-2.
 */
export function chainIdFor(x402Version, network) {
  const table = x402Version === 1 ? V1_NETWORKS : x402Version === 2 ? V2_NETWORKS : null;
  if (!table || typeof network !== 'string' || !Object.hasOwn(table, network)) return undefined;
  return table[network];
}

/** v1Name maps a CAIP-2 id or a v1 name to the v1 name ("eip155:8453" → "base"). */
export function v1Name(network) {
  if (Object.hasOwn(V1_NETWORKS, network)) return network;
  const id = V2_NETWORKS[network];
  return Object.keys(V1_NETWORKS).find((n) => V1_NETWORKS[n] === id);
}

/** caip2 maps a v1 name or a CAIP-2 id to the CAIP-2 id ("base" → "eip155:8453"). */
export function caip2(network) {
  if (Object.hasOwn(V2_NETWORKS, network)) return network;
  const id = V1_NETWORKS[network];
  return id === undefined ? undefined : `eip155:${id}`;
}
