// Fixed test identities. These are the public Hardhat/Anvil development keys: worthless, well known, and
// never used against a real chain (the facilitator here is offline).

import { privateKeyToAccount } from 'viem/accounts';
import { randomBytes } from 'node:crypto';
import { getAddress } from 'viem';
import { USDC } from './networks.mjs';

/** The buyer's private key (Anvil account 0). */
export const BUYER_KEY = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80';
/** The buyer's address. */
export const BUYER_ADDRESS = privateKeyToAccount(BUYER_KEY).address;

/** The seller's key (Anvil account 1): it signs the seller's offers and receipts (offer-receipt extension). */
export const SELLER_KEY = '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d';
/** The seller's default payTo, the address of SELLER_KEY. */
export const SELLER_PAY_TO = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';
/** A second payee (Anvil account 2), e.g. the one a test puts on a blocklist. */
export const ALT_PAY_TO = '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC';

const authorizationTypes = {
  TransferWithAuthorization: [
    { name: 'from', type: 'address' },
    { name: 'to', type: 'address' },
    { name: 'value', type: 'uint256' },
    { name: 'validAfter', type: 'uint256' },
    { name: 'validBefore', type: 'uint256' },
    { name: 'nonce', type: 'bytes32' },
  ],
};

/**
 * signAuthorization signs an EIP-3009 TransferWithAuthorization by hand, for payloads the SDK clients would
 * never produce (an expired window, a wrong recipient). chainId selects the USDC domain unless domain is given.
 */
export async function signAuthorization({ key = BUYER_KEY, chainId, asset, domain, to, value, validAfter = '0', validBefore, nonce }) {
  const account = privateKeyToAccount(key);
  const usdc = USDC[chainId];
  const authorization = {
    from: account.address,
    to: getAddress(to),
    value: String(value),
    validAfter: String(validAfter),
    validBefore: String(validBefore),
    nonce: nonce ?? `0x${randomBytes(32).toString('hex')}`,
  };
  const signature = await account.signTypedData({
    domain: domain ?? { name: usdc.name, version: usdc.version, chainId, verifyingContract: asset ?? usdc.address },
    types: authorizationTypes,
    primaryType: 'TransferWithAuthorization',
    message: {
      ...authorization,
      value: BigInt(authorization.value),
      validAfter: BigInt(authorization.validAfter),
      validBefore: BigInt(authorization.validBefore),
    },
  });
  return { signature, authorization };
}
