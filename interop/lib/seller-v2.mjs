// An x402 v2 seller built from the official packages: @x402/express paymentMiddleware, an x402ResourceServer
// with the ExactEvmScheme server registered, and our local facilitator through HTTPFacilitatorClient.
// Besides the shared routes it serves GET /multi: two options, the other network first ($0.01 each), and
// GET /signed: the same with the offer-receipt extension (EIP-712 offers and receipt signed by SELLER_KEY).
//
// Standalone: node interop/lib/seller-v2.mjs --port 4021 --facilitator http://127.0.0.1:4020
//             [--pay-to 0x…] [--alt-pay-to 0x…] [--network base|base-sepolia|eip155:8453|eip155:84532]
//             [--tls-cert FILE --tls-key FILE] [--max-timeout 60]

import express from 'express';
import { pathToFileURL } from 'node:url';
import { paymentMiddlewareFromHTTPServer, x402HTTPResourceServer, x402ResourceServer } from '@x402/express';
import { HTTPFacilitatorClient } from '@x402/core/server';
import { ExactEvmScheme } from '@x402/evm/exact/server';
import { createEIP712OfferReceiptIssuer, createOfferReceiptExtension, declareOfferReceiptExtension } from '@x402/extensions/offer-receipt';
import { privateKeyToAccount } from 'viem/accounts';
import { caip2 } from './networks.mjs';
import { ALT_PAY_TO, SELLER_KEY, SELLER_PAY_TO } from './wallets.mjs';
import { ROUTES, addCommonRoutes, listen, newSellerStats, sellerMain, statsMiddleware } from './seller-common.mjs';

/**
 * startSellerV2 starts the v2 seller and resolves to {url, port, network, stats(), close()}. It fetches the
 * facilitator's /supported before listening, so a facilitator that does not serve the network fails here.
 */
export async function startSellerV2({
  facilitatorUrl, port = 0, host = '127.0.0.1', payTo = SELLER_PAY_TO, altPayTo = ALT_PAY_TO,
  network = 'base', tls, maxTimeoutSeconds = 60,
}) {
  const net = caip2(network);
  if (!net) throw new Error(`seller-v2: network ${network} is not one the harness serves`);
  // The other served network: /multi offers it first, so a client that takes the first option pays there.
  const other = net === 'eip155:8453' ? 'eip155:84532' : 'eip155:8453';
  const resourceServer = new x402ResourceServer(new HTTPFacilitatorClient({ url: facilitatorUrl }))
    .register(net, new ExactEvmScheme())
    .register(other, new ExactEvmScheme());
  // Signed offers and receipts (EIP-712), by the key behind the default payTo, for GET /signed.
  const signer = privateKeyToAccount(SELLER_KEY);
  resourceServer.registerExtension(createOfferReceiptExtension(
    createEIP712OfferReceiptIssuer(`did:pkh:eip155:1:${signer.address}`, (typed) => signer.signTypedData(typed))));
  const routes = {};
  for (const r of ROUTES) {
    routes[`GET ${r.path}`] = {
      accepts: { scheme: 'exact', price: r.price, network: net, payTo: r.alt ? altPayTo : payTo, maxTimeoutSeconds },
      description: `${r.description} (x402 v2 seller)`,
      mimeType: 'application/json',
    };
  }
  routes['GET /multi'] = {
    accepts: [
      { scheme: 'exact', price: '$0.01', network: other, payTo, maxTimeoutSeconds },
      { scheme: 'exact', price: '$0.01', network: net, payTo, maxTimeoutSeconds },
    ],
    description: `two payment options, ${other} first (x402 v2 seller)`,
    mimeType: 'application/json',
  };
  routes['GET /signed'] = {
    ...routes['GET /multi'],
    description: `two payment options with signed offers and a signed receipt (x402 v2 seller)`,
    extensions: declareOfferReceiptExtension({ includeTxHash: true }),
  };
  const httpServer = new x402HTTPResourceServer(resourceServer, routes);
  await httpServer.initialize();

  const holder = { stats: newSellerStats() };
  const app = express();
  app.use(statsMiddleware(holder));
  app.use(paymentMiddlewareFromHTTPServer(httpServer, undefined, undefined, false));
  for (const p of ['/multi', '/signed']) app.get(p, (req, res) => res.json({ resource: p, seller: 'v2', paidAt: new Date().toISOString() }));
  addCommonRoutes(app, holder, 'v2');
  const l = await listen(app, { port, host, tls });
  return { ...l, network: net, stats: () => holder.stats };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  sellerMain('seller-v2', startSellerV2).catch((err) => {
    console.error(`seller-v2: ${err?.message ?? err}`);
    process.exit(1);
  });
}
