// Test helpers: a real @x402/core client with the official EVM scheme and a counting signer, and challenges
// shaped as the official sellers write them.
import { x402Client, x402HTTPClient } from '@x402/core/client';
import { registerExactEvmScheme } from '@x402/evm/exact/client';
import { UptoEvmScheme } from '@x402/evm/upto/client';
import { privateKeyToAccount } from 'viem/accounts';

export const BUYER_KEY = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80'; // Anvil #0
export const PAY_TO = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';
export const BASE_USDC = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913';

/** client returns an x402Client whose signer counts signatures (and can be made to fail). */
export function countingClient({ failSigning = false } = {}) {
  const account = privateKeyToAccount(BUYER_KEY);
  const signer = {
    ...account,
    signs: 0,
    async signTypedData(typed) {
      signer.signs++;
      if (failSigning) throw new Error('hardware wallet unplugged');
      return account.signTypedData(typed);
    },
  };
  // The SDK's own spend controls ($1 default cap) are off, so that what refuses is the guard.
  const client = new x402Client().setSpendControls(false);
  registerExactEvmScheme(client, { signer });
  client.register('eip155:*', new UptoEvmScheme(signer)); // upto options: a Permit2 authorization of the maximum
  // The HTTP client the SDK's fetch/axios wrappers drive: its onPaymentRequired hook carries the request URL.
  return { client, signer, http: new x402HTTPClient(client) };
}

/**
 * payVia does what wrapFetchWithPayment does with a 402 from `url` (default: the URL the challenge names):
 * the HTTP client's payment-required hooks with the request URL, then the payment payload.
 */
export async function payVia(http, ch, url = ch.resource?.url) {
  const headers = await http.handlePaymentRequired(ch, url);
  if (headers) throw new Error('a payment-required hook answered headers');
  return http.createPaymentPayload(ch);
}

/** challenge is a v2 PaymentRequired for one Base USDC option of `atomic` units. */
export function challenge(atomic, { payTo = PAY_TO, url = 'https://api.shop.example/data', network = 'eip155:8453', asset = BASE_USDC } = {}) {
  return {
    x402Version: 2,
    resource: { url, description: '', mimeType: 'application/json' },
    accepts: [{ scheme: 'exact', network, amount: String(atomic), asset, payTo, maxTimeoutSeconds: 60, extra: { name: 'USD Coin', version: '2' } }],
  };
}

/** clock is an injectable clock starting at `iso`. */
export function clock(iso) {
  let t = new Date(iso).getTime();
  const now = () => new Date(t);
  now.set = (s) => { t = new Date(s).getTime(); };
  return now;
}
