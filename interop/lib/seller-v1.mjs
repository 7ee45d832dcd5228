// An x402 v1 seller built from the official (legacy) x402-express package, using our local facilitator.
// x402-express takes one payTo per middleware, so /alt (the alternative payee) gets a second middleware.
//
// Standalone: node interop/lib/seller-v1.mjs --port 4022 --facilitator http://127.0.0.1:4020
//             [--pay-to 0x…] [--alt-pay-to 0x…] [--network base|base-sepolia]
//             [--tls-cert FILE --tls-key FILE] [--max-timeout 60]

import express from 'express';
import { pathToFileURL } from 'node:url';
import { paymentMiddleware } from 'x402-express';
import { v1Name } from './networks.mjs';
import { ALT_PAY_TO, SELLER_PAY_TO } from './wallets.mjs';
import { ROUTES, addCommonRoutes, listen, newSellerStats, sellerMain, statsMiddleware } from './seller-common.mjs';

/** startSellerV1 starts the v1 seller and resolves to {url, port, network, stats(), close()}. */
export async function startSellerV1({
  facilitatorUrl, port = 0, host = '127.0.0.1', payTo = SELLER_PAY_TO, altPayTo = ALT_PAY_TO,
  network = 'base', tls, maxTimeoutSeconds = 60,
}) {
  const net = v1Name(network);
  if (!net) throw new Error(`seller-v1: network ${network} is not one the harness serves`);
  const main = {};
  const alt = {};
  for (const r of ROUTES) {
    (r.alt ? alt : main)[`GET ${r.path}`] = {
      price: r.price,
      network: net,
      config: { description: `${r.description} (x402 v1 seller)`, mimeType: 'application/json', maxTimeoutSeconds },
    };
  }
  const facilitator = { url: facilitatorUrl };
  const holder = { stats: newSellerStats() };
  const app = express();
  app.use(statsMiddleware(holder));
  app.use(paymentMiddleware(payTo, main, facilitator));
  app.use(paymentMiddleware(altPayTo, alt, facilitator));
  addCommonRoutes(app, holder, 'v1');
  const l = await listen(app, { port, host, tls });
  return { ...l, network: net, stats: () => holder.stats };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  sellerMain('seller-v1', startSellerV1).catch((err) => {
    console.error(`seller-v1: ${err?.message ?? err}`);
    process.exit(1);
  });
}
