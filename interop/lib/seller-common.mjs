// What the two test sellers share: the priced routes, the seller-side counters (/stats), the HTTP or HTTPS
// listener, and the standalone command line.

import http from 'node:http';
import https from 'node:https';
import fs from 'node:fs';
import { parseArgs } from 'node:util';
import { ALT_PAY_TO, SELLER_PAY_TO } from './wallets.mjs';

/**
 * The priced routes both sellers serve. atomic is the USDC amount (6 decimals) the "$" price turns into.
 * /alt pays altPayTo (the blocklist tests); /fail is paid but its handler fails, so it is never settled.
 */
export const ROUTES = Object.freeze([
  { path: '/cheap', price: '$0.01', atomic: 10000n, description: 'cheap test resource' },
  { path: '/mid', price: '$0.50', atomic: 500000n, description: 'mid-priced test resource (above the hold threshold)' },
  { path: '/pricey', price: '$5', atomic: 5000000n, description: 'pricey test resource (above the default maximum)' },
  { path: '/alt', price: '$0.01', atomic: 10000n, description: 'cheap resource paying the alternative payee', alt: true },
  { path: '/fail', price: '$0.01', atomic: 10000n, description: 'paid resource whose handler fails' },
]);

// Prices of the routes only one seller serves (seller-v2's /multi and /signed), for the paid-amount counter.
const OTHER_PRICES = Object.freeze({ '/multi': 10000n, '/signed': 10000n });

/** newSellerStats returns the zeroed counters a seller serves at GET /stats. */
export function newSellerStats() {
  return {
    requests: 0,
    paymentHeaders: 0, // requests that carried X-PAYMENT or PAYMENT-SIGNATURE
    challenges: 0, // 402 answers
    paid200: 0, // 200 answers that carry a settlement header
    paidAtomic: '0', // sum of the route prices of those paid 200s, atomic USDC units
    byPath: {},
    payments: [], // {path, header, status, settled}
  };
}

/**
 * statsMiddleware counts what reaches the seller and what it answers. A "paid 200" is a 200 that carries a
 * success settlement header: the seller's proof that it delivered a settled payment.
 */
export function statsMiddleware(holder) {
  return (req, res, next) => {
    const stats = holder.stats;
    stats.requests++;
    const header = req.get('payment-signature') ? 'PAYMENT-SIGNATURE' : req.get('x-payment') ? 'X-PAYMENT' : null;
    if (header) stats.paymentHeaders++;
    res.on('finish', () => {
      const route = ROUTES.find((r) => r.path === req.path);
      const p = (stats.byPath[req.path] ??= { requests: 0, paymentHeaders: 0, challenges: 0, paid200: 0 });
      p.requests++;
      if (header) p.paymentHeaders++;
      if (res.statusCode === 402) {
        stats.challenges++;
        p.challenges++;
      }
      const settlement = res.getHeader('payment-response') ?? res.getHeader('x-payment-response');
      let settled = false;
      if (settlement) {
        try {
          settled = JSON.parse(Buffer.from(String(settlement), 'base64').toString('utf8')).success === true;
        } catch {
          settled = false;
        }
      }
      if (res.statusCode === 200 && settled) {
        stats.paid200++;
        p.paid200++;
        stats.paidAtomic = String(BigInt(stats.paidAtomic) + (route?.atomic ?? OTHER_PRICES[req.path] ?? 0n));
      }
      if (header) stats.payments.push({ path: req.path, header, status: res.statusCode, settled });
    });
    next();
  };
}

/** addCommonRoutes mounts the test hooks and the handlers behind the payment middleware. */
export function addCommonRoutes(app, holder, sellerName) {
  app.get('/stats', (req, res) => res.json(holder.stats));
  app.post('/stats/reset', (req, res) => {
    holder.stats = newSellerStats();
    res.json({ ok: true });
  });
  app.get('/health', (req, res) => res.json({ ok: true, seller: sellerName }));
  app.get('/free', (req, res) => res.json({ free: true, seller: sellerName }));
  // A seller must not be able to speak for payguard: these headers are forged on purpose.
  app.get('/forge', (req, res) => {
    res.set('X-Payguard-Decision', 'allow').set('X-Payguard-Hold', 'forged-by-seller').json({ forged: true });
  });
  // A 402 that is not x402 (no challenge header, no x402 body): a proxy passes it on untouched.
  app.get('/plain402', (req, res) => res.status(402).type('text/plain').send('subscription required\n'));
  app.get('/fail', (req, res) => res.status(500).json({ error: 'handler failed on purpose' }));
  for (const r of ROUTES) {
    if (r.path === '/fail') continue;
    app.get(r.path, (req, res) => res.json({ resource: r.path, seller: sellerName, paidAt: new Date().toISOString() }));
  }
}

/**
 * listen serves app over HTTP, or HTTPS when tls {key, cert} (PEM strings) is given, and resolves to
 * {url, port, close()}. The URL uses 127.0.0.1, which the test certificates name.
 */
export async function listen(app, { port = 0, host = '127.0.0.1', tls } = {}) {
  const server = tls ? https.createServer({ key: tls.key, cert: tls.cert }, app) : http.createServer(app);
  server.keepAliveTimeout = 2000;
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, resolve);
  });
  const actual = server.address().port;
  return {
    url: `${tls ? 'https' : 'http'}://${host}:${actual}`,
    port: actual,
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}

/**
 * sellerMain is the standalone entry point of a seller: it parses
 * --port N --facilitator URL [--pay-to A] [--alt-pay-to A] [--network base|base-sepolia|eip155:…]
 * [--tls-cert FILE --tls-key FILE] [--max-timeout S], starts it, and prints one JSON "ready" line.
 */
export async function sellerMain(role, start) {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        port: { type: 'string', default: '0' },
        host: { type: 'string', default: '127.0.0.1' },
        facilitator: { type: 'string' },
        'pay-to': { type: 'string', default: SELLER_PAY_TO },
        'alt-pay-to': { type: 'string', default: ALT_PAY_TO },
        network: { type: 'string', default: 'base' },
        'tls-cert': { type: 'string' },
        'tls-key': { type: 'string' },
        'max-timeout': { type: 'string', default: '60' },
      },
    }));
  } catch (err) {
    console.error(`${role}: ${err.message}`);
    process.exit(2);
  }
  if (!values.facilitator) {
    console.error(`${role}: --facilitator URL is required`);
    process.exit(2);
  }
  if (Boolean(values['tls-cert']) !== Boolean(values['tls-key'])) {
    console.error(`${role}: --tls-cert and --tls-key go together`);
    process.exit(2);
  }
  const tls = values['tls-cert'] ? { cert: fs.readFileSync(values['tls-cert'], 'utf8'), key: fs.readFileSync(values['tls-key'], 'utf8') } : undefined;
  const s = await start({
    port: Number(values.port), host: values.host, facilitatorUrl: values.facilitator, payTo: values['pay-to'],
    altPayTo: values['alt-pay-to'], network: values.network, tls, maxTimeoutSeconds: Number(values['max-timeout']),
  });
  console.log(JSON.stringify({ ready: true, role, url: s.url, port: s.port, network: s.network }));
  const stop = () => s.close().then(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}
