// An x402 v2 seller paid on Solana devnet, built from the official packages: @x402/express's payment
// middleware over an x402ResourceServer with @x402/svm's ExactSvmScheme server registered, and our local
// facilitator (which names its fee payer in /supported). Prices are the shared routes' ("$0.01" becomes
// 10000 atomic units of devnet USDC); /alt pays the second Solana payee. startSellerSvmV1 is the same on the
// legacy x402-express (x402 v1, network solana-devnet).

import express from 'express';
import { paymentMiddleware } from 'x402-express';
import { paymentMiddlewareFromHTTPServer, x402HTTPResourceServer, x402ResourceServer } from '@x402/express';
import { HTTPFacilitatorClient } from '@x402/core/server';
import { ExactSvmScheme } from '@x402/svm/exact/server';
import { ROUTES, addCommonRoutes, listen, newSellerStats, statsMiddleware } from './seller-common.mjs';
import { SOLANA_DEVNET, altSellerSigner, sellerSigner } from './solana.mjs';

/**
 * startSellerSvm starts the Solana seller and resolves to {url, port, network, payTo, altPayTo, stats(), close()}.
 * The resource server reads the facilitator's /supported before listening (the fee payer comes from there).
 */
export async function startSellerSvm({ facilitatorUrl, port = 0, host = '127.0.0.1', maxTimeoutSeconds = 60 }) {
  const payTo = (await sellerSigner()).address;
  const altPayTo = (await altSellerSigner()).address;
  const resourceServer = new x402ResourceServer(new HTTPFacilitatorClient({ url: facilitatorUrl }))
    .register(SOLANA_DEVNET, new ExactSvmScheme());
  const routes = {};
  for (const r of ROUTES) {
    routes[`GET ${r.path}`] = {
      accepts: { scheme: 'exact', price: r.price, network: SOLANA_DEVNET, payTo: r.alt ? altPayTo : payTo, maxTimeoutSeconds },
      description: `${r.description} (x402 v2 seller on Solana devnet)`,
      mimeType: 'application/json',
    };
  }
  const httpServer = new x402HTTPResourceServer(resourceServer, routes);
  await httpServer.initialize();
  const holder = { stats: newSellerStats() };
  const app = express();
  app.use(statsMiddleware(holder));
  app.use(paymentMiddlewareFromHTTPServer(httpServer, undefined, undefined, false));
  addCommonRoutes(app, holder, 'svm');
  const l = await listen(app, { port, host });
  return { ...l, network: SOLANA_DEVNET, payTo, altPayTo, stats: () => holder.stats };
}

/** startSellerSvmV1 is the x402 v1 Solana seller: x402-express on solana-devnet (fee payer from /supported). */
export async function startSellerSvmV1({ facilitatorUrl, port = 0, host = '127.0.0.1', maxTimeoutSeconds = 60 }) {
  const payTo = (await sellerSigner()).address;
  const altPayTo = (await altSellerSigner()).address;
  const main = {};
  const alt = {};
  for (const r of ROUTES) {
    (r.alt ? alt : main)[`GET ${r.path}`] = {
      price: r.price,
      network: 'solana-devnet',
      config: { description: `${r.description} (x402 v1 seller on Solana devnet)`, mimeType: 'application/json', maxTimeoutSeconds },
    };
  }
  const facilitator = { url: facilitatorUrl };
  const holder = { stats: newSellerStats() };
  const app = express();
  app.use(statsMiddleware(holder));
  app.use(paymentMiddleware(payTo, main, facilitator));
  app.use(paymentMiddleware(altPayTo, alt, facilitator));
  addCommonRoutes(app, holder, 'svm-v1');
  const l = await listen(app, { port, host });
  return { ...l, network: 'solana-devnet', payTo, altPayTo, stats: () => holder.stats };
}
