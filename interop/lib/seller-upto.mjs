// An x402 v2 seller with `upto` routes, built from the official packages: @x402/express paymentMiddleware,
// an x402ResourceServer with @x402/evm's UptoEvmScheme server, and our local facilitator. The route's price
// is the maximum the buyer authorizes; the handler reports its usage with @x402/express's
// setSettlementOverrides, and the resource server settles that amount (at most the maximum).
//
//   GET /metered?usage=N   maximum $0.20; settles N atomic units (default 50000), 0 included
//   GET /metered-pricey    maximum $5 (above payguard's default per-payment maximum); settles 10000
//
// Standalone: node interop/lib/seller-upto.mjs --port 4023 --facilitator http://127.0.0.1:4020

import express from 'express';
import { pathToFileURL } from 'node:url';
import { paymentMiddlewareFromHTTPServer, setSettlementOverrides, x402HTTPResourceServer, x402ResourceServer } from '@x402/express';
import { HTTPFacilitatorClient } from '@x402/core/server';
import { UptoEvmScheme } from '@x402/evm/upto/server';
import { caip2 } from './networks.mjs';
import { SELLER_PAY_TO } from './wallets.mjs';
import { listen, newSellerStats, sellerMain, statsMiddleware } from './seller-common.mjs';

/** The upto routes: path, maximum price, and the atomic maximum it becomes (USDC, 6 decimals). */
export const UPTO_ROUTES = Object.freeze([
  { path: '/metered', price: '$0.20', maximum: 200000n },
  { path: '/metered-pricey', price: '$5', maximum: 5000000n },
]);

/** startSellerUpto starts the upto seller and resolves to {url, port, network, stats(), close()}. */
export async function startSellerUpto({ facilitatorUrl, port = 0, host = '127.0.0.1', payTo = SELLER_PAY_TO, network = 'base', tls, maxTimeoutSeconds = 60 }) {
  const net = caip2(network);
  if (!net) throw new Error(`seller-upto: network ${network} is not one the harness serves`);
  const resourceServer = new x402ResourceServer(new HTTPFacilitatorClient({ url: facilitatorUrl })).register(net, new UptoEvmScheme());
  const routes = {};
  for (const r of UPTO_ROUTES) {
    routes[`GET ${r.path}`] = {
      accepts: { scheme: 'upto', price: r.price, network: net, payTo, maxTimeoutSeconds },
      description: `usage-priced resource, up to ${r.price} (x402 v2 upto seller)`,
      mimeType: 'application/json',
    };
  }
  const httpServer = new x402HTTPResourceServer(resourceServer, routes);
  await httpServer.initialize();
  const holder = { stats: newSellerStats() };
  const app = express();
  app.use(statsMiddleware(holder));
  app.use(paymentMiddlewareFromHTTPServer(httpServer, undefined, undefined, false));
  app.get('/metered', (req, res) => {
    const usage = /^[0-9]+$/.test(String(req.query.usage ?? '')) ? String(req.query.usage) : '50000';
    setSettlementOverrides(res, { amount: usage });
    res.json({ resource: '/metered', seller: 'upto', usage });
  });
  app.get('/metered-pricey', (req, res) => {
    setSettlementOverrides(res, { amount: '10000' });
    res.json({ resource: '/metered-pricey', seller: 'upto' });
  });
  app.get('/stats', (req, res) => res.json(holder.stats));
  const l = await listen(app, { port, host, tls });
  return { ...l, network: net, stats: () => holder.stats };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  sellerMain('seller-upto', startSellerUpto).catch((err) => {
    console.error(`seller-upto: ${err?.message ?? err}`);
    process.exit(1);
  });
}
