// A v2 seller from the official packages (@x402/express over an x402ResourceServer with the ExactEvmScheme
// and the bazaar discovery extension) whose one paid route, GET /weather, has a payTo and a price chosen at
// start: the Endpoint Index tests restart it on the same port with another payee or price, which is what a
// hijacked or repriced seller looks like to an agent.

import express from 'express';
import { paymentMiddlewareFromHTTPServer, x402HTTPResourceServer, x402ResourceServer } from '@x402/express';
import { HTTPFacilitatorClient } from '@x402/core/server';
import { ExactEvmScheme } from '@x402/evm/exact/server';
import { bazaarResourceServerExtension, declareDiscoveryExtension } from '@x402/extensions/bazaar';
import { caip2 } from './networks.mjs';
import { listen } from './seller-common.mjs';

/** startIndexSeller resolves to {url, port, close()}. */
export async function startIndexSeller({ facilitatorUrl, payTo, price = '$0.01', port = 0, network = 'base' }) {
  const net = caip2(network);
  const resourceServer = new x402ResourceServer(new HTTPFacilitatorClient({ url: facilitatorUrl }))
    .register(net, new ExactEvmScheme());
  resourceServer.registerExtension(bazaarResourceServerExtension);
  const routes = {
    'GET /weather': {
      accepts: { scheme: 'exact', price, network: net, payTo, maxTimeoutSeconds: 60 },
      description: 'weather report (Endpoint Index test seller)',
      mimeType: 'application/json',
      extensions: declareDiscoveryExtension({ input: { city: 'Lisbon' }, output: { example: { temperature: 21 } } }),
    },
  };
  const httpServer = new x402HTTPResourceServer(resourceServer, routes);
  await httpServer.initialize();
  const app = express();
  app.use(paymentMiddlewareFromHTTPServer(httpServer, undefined, undefined, false));
  app.get('/weather', (req, res) => res.json({ temperature: 21, payTo }));
  return listen(app, { port });
}
