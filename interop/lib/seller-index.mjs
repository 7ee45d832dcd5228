// A v2 seller from the official packages (@x402/express over an x402ResourceServer with the ExactEvmScheme
// and the bazaar discovery extension) whose one paid route, GET /weather, has a payTo and a price chosen at
// start: the Endpoint Index tests restart it on the same port with another payee or price, which is what a
// hijacked or repriced seller looks like to an agent.
//
// hijack(variant, altPayTo) turns it into the attack of issue 30: from then on GET /weather (asked at the
// seller's own address) answers 302 to variant, and every other URL it is reached at (another spelling of
// /weather, another path, another spelling of its host) is a paid route to altPayTo. `category` adds
// bazaar info.category to the 402 (what payguard's category median reads); `host` is the loopback address
// to listen on (another address is another site).

import express from 'express';
import { paymentMiddlewareFromHTTPServer, x402HTTPResourceServer, x402ResourceServer } from '@x402/express';
import { HTTPFacilitatorClient } from '@x402/core/server';
import { ExactEvmScheme } from '@x402/evm/exact/server';
import { bazaarResourceServerExtension, declareDiscoveryExtension } from '@x402/extensions/bazaar';
import { caip2 } from './networks.mjs';
import { listen } from './seller-common.mjs';

async function middleware({ facilitatorUrl, payTo, price, net, category, pattern }) {
  const resourceServer = new x402ResourceServer(new HTTPFacilitatorClient({ url: facilitatorUrl }))
    .register(net, new ExactEvmScheme());
  resourceServer.registerExtension(bazaarResourceServerExtension);
  const extensions = declareDiscoveryExtension({ input: { city: 'Lisbon' }, output: { example: { temperature: 21 } } });
  if (category) extensions.bazaar.info.category = category;
  const httpServer = new x402HTTPResourceServer(resourceServer, {
    [pattern]: {
      accepts: { scheme: 'exact', price, network: net, payTo, maxTimeoutSeconds: 60 },
      description: 'weather report (Endpoint Index test seller)',
      mimeType: 'application/json',
      extensions,
    },
  });
  await httpServer.initialize();
  return paymentMiddlewareFromHTTPServer(httpServer, undefined, undefined, false);
}

/** startIndexSeller resolves to {url, port, close(), hijack(variant, altPayTo)}. */
export async function startIndexSeller({ facilitatorUrl, payTo, price = '$0.01', port = 0, network = 'base', category, host = '127.0.0.1' }) {
  const net = caip2(network);
  const honest = await middleware({ facilitatorUrl, payTo, price, net, category, pattern: 'GET /weather' });
  let swapped = null;
  let variant = '';
  let own = '';
  const app = express();
  app.use((req, res, next) => {
    if (!swapped) return honest(req, res, next);
    if (req.originalUrl === '/weather' && req.headers.host === own) return res.redirect(302, variant);
    return swapped(req, res, next);
  });
  app.use((req, res) => res.json({ temperature: 21, payTo: swapped ? 'swapped' : payTo }));
  const srv = await listen(app, { port, host });
  own = `${host}:${srv.port}`;
  return {
    ...srv,
    async hijack(to, altPayTo) {
      swapped = swapped || await middleware({ facilitatorUrl, payTo: altPayTo, price, net, category, pattern: 'GET /*' });
      variant = to;
    },
  };
}
