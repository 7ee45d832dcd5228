// Buyers: paid requests made by the official x402 clients, @x402/fetch (v2, which also pays v1 sellers) and
// x402-fetch (v1), directly or through an HTTP(S) proxy such as payguard.
//
// Node 20's built-in fetch ignores HTTP_PROXY, so every request goes through undici's own fetch with a
// dispatcher: a ProxyAgent for a proxy (plain-HTTP targets are sent in absolute form, HTTPS targets through a
// CONNECT tunnel, as curl and Go do), with `ca` as the trust list for the TLS inside the tunnel (payguard's
// MITM CA).
//
// CLI (used by the Go proxy example and the tests), prints {status, headers, body, …} as JSON:
//   node interop/lib/buyer.mjs --url U [--version 2|1] [--proxy URL|env] [--ca FILE] [--header 'K: V']…
//                              [--method M] [--network base|base-sepolia] [--key 0x…] [--tunnel]
// Exit code 0 when a response came back (whatever its status), 1 when the request failed, 2 on bad usage.

import fs from 'node:fs';
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';
import { Agent, EnvHttpProxyAgent, ProxyAgent, fetch as undiciFetch } from 'undici';
import { createWalletClient, http as viemHttp } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { base, baseSepolia } from 'viem/chains';
import { wrapFetchWithPayment as wrapFetchV2, x402Client } from '@x402/fetch';
import { registerExactEvmScheme } from '@x402/evm/exact/client';
import { ExactSvmScheme } from '@x402/svm/exact/client';
import { ExactSvmSchemeV1 } from '@x402/svm/exact/v1/client';
import { UptoEvmScheme } from '@x402/evm/upto/client';
import { wrapFetchWithPayment as wrapFetchV1 } from 'x402-fetch';
import { BUYER_KEY } from './wallets.mjs';

/**
 * makeDispatcher returns the undici dispatcher for a request: a ProxyAgent when proxy is a URL, an
 * EnvHttpProxyAgent when proxy is "env" (HTTP_PROXY/HTTPS_PROXY/NO_PROXY), else a direct Agent. ca (PEM string
 * or array) is the trust list for the HTTPS origin; as everywhere in Node it replaces the default roots
 * (NODE_EXTRA_CA_CERTS adds to them instead). tunnel forces CONNECT for plain-HTTP targets too.
 */
export function makeDispatcher({ proxy, ca, tunnel = false } = {}) {
  const requestTls = ca ? { ca } : undefined;
  if (proxy === 'env') return new EnvHttpProxyAgent({ proxyTunnel: tunnel, requestTls });
  if (proxy) return new ProxyAgent({ uri: proxy, proxyTunnel: tunnel, requestTls });
  return new Agent({ connect: requestTls });
}

// recordingFetch adapts the SDKs to undici's fetch: @x402/fetch hands over a global Request (not undici's
// class), so it is taken apart into a URL and an init. Every exchange is logged for the caller. tamper, when
// given, rewrites the decoded payment payload of a paying request before it leaves (tamper tests).
function recordingFetch(dispatcher, exchanges, tamper) {
  return async (input, init) => {
    let url;
    let opts;
    if (typeof Request !== 'undefined' && input instanceof Request) {
      url = input.url;
      const hasBody = input.method !== 'GET' && input.method !== 'HEAD' && input.body !== null;
      opts = {
        method: input.method,
        headers: [...input.headers],
        body: hasBody ? Buffer.from(await input.arrayBuffer()) : undefined,
        redirect: input.redirect,
        signal: input.signal, // the caller's AbortSignal (buy's signal), carried by the SDK's Request
      };
    } else {
      url = String(input instanceof URL ? input.href : input);
      const { __is402Retry, ...rest } = init ?? {};
      opts = rest;
    }
    const h = new Headers(opts.headers ?? {});
    const payName = h.has('payment-signature') ? 'payment-signature' : h.has('x-payment') ? 'x-payment' : null;
    if (tamper && payName) {
      h.set(payName, encodePayment(tamper(JSON.parse(Buffer.from(h.get(payName), 'base64').toString('utf8')))));
      opts = { ...opts, headers: [...h] };
    }
    const sentHeaders = Object.fromEntries(h);
    const exchange = { method: opts.method ?? 'GET', url, headers: sentHeaders, status: null };
    exchanges.push(exchange);
    const res = await undiciFetch(url, { ...opts, dispatcher });
    exchange.status = res.status;
    return res;
  };
}

// errorText keeps the cause: undici reports "fetch failed" and puts the reason (refused, TLS, …) in cause.
function errorText(err) {
  const msg = String(err?.message ?? err);
  return err?.cause ? `${msg}: ${err.cause.message ?? err.cause}` : msg;
}

function decodeBase64JSON(value) {
  if (!value) return null;
  try {
    return JSON.parse(Buffer.from(value, 'base64').toString('utf8'));
  } catch {
    return { undecodable: value };
  }
}

// summarize turns the final response and the exchange log into the harness's result object.
async function summarize(res, exchanges) {
  const headers = Object.fromEntries(res.headers);
  const body = await res.text();
  let json = null;
  try {
    json = JSON.parse(body);
  } catch {
    json = null;
  }
  const paid = [...exchanges].reverse().find((e) => e.headers['payment-signature'] || e.headers['x-payment']);
  let paymentHeader = null;
  if (paid) {
    const name = paid.headers['payment-signature'] ? 'PAYMENT-SIGNATURE' : 'X-PAYMENT';
    const value = paid.headers[name.toLowerCase()];
    paymentHeader = { name, value, payload: decodeBase64JSON(value) };
  }
  return {
    status: res.status,
    headers,
    body,
    json,
    paymentResponse: decodeBase64JSON(headers['payment-response'] ?? headers['x-payment-response']),
    paymentRequired: decodeBase64JSON(headers['payment-required']),
    paymentHeader,
    exchanges,
    error: null,
  };
}

/** v1Signer builds an x402 v1 wallet client that can only sign: its RPC transport points at a closed port. */
function v1Signer(key, network) {
  const chain = network === 'base-sepolia' ? baseSepolia : base;
  return createWalletClient({ chain, transport: viemHttp('http://127.0.0.1:9/no-rpc'), account: privateKeyToAccount(key) });
}

/**
 * buy makes one paid request with an official client and resolves to
 * {status, headers, body, json, paymentResponse, paymentRequired, paymentHeader, exchanges, error}.
 * version 2 uses @x402/fetch (x402Client + registerExactEvmScheme, which also registers the v1 networks);
 * version 1 uses x402-fetch. Client-side spend caps are off by default so that the proxy, not the client,
 * is what a test observes refusing; pass spendControls / maxValue to turn them on. tamper(payload) → payload
 * rewrites the signed payment on its way out; signal (an AbortSignal) lets a test walk away mid-request, as a
 * buyer that disconnects or a load balancer that gives up would. upto: the v2 client pays with @x402/evm's upto scheme only
 * (a Permit2 authorization of the route's maximum) instead of exact. svm {signer, rpcUrl, wrap?} also
 * registers @x402/svm's ExactSvmScheme for solana:* and ExactSvmSchemeV1 for solana-devnet (their RPC calls
 * go to rpcUrl, directly); with version 1, x402-fetch signs with svm.signer; wrap(scheme) may return a scheme
 * that builds the payment otherwise (tamper tests).
 * When the client throws (it got a challenge it could not pay), status is null and error says why.
 */
export async function buy(url, {
  version = 2, proxy, ca, tunnel, dispatcher, method = 'GET', headers = {}, body,
  key = BUYER_KEY, network = 'base', spendControls = false, maxValue = 10n ** 12n, tamper, upto = false, svm, signal,
} = {}) {
  const own = !dispatcher;
  const d = dispatcher ?? makeDispatcher({ proxy, ca, tunnel });
  const exchanges = [];
  const fetchImpl = recordingFetch(d, exchanges, tamper);
  try {
    let paying;
    if (version === 2) {
      const client = new x402Client();
      if (upto) client.register('eip155:*', new UptoEvmScheme(privateKeyToAccount(key)));
      else registerExactEvmScheme(client, { signer: privateKeyToAccount(key) });
      if (svm) {
        const scheme = new ExactSvmScheme(svm.signer, { rpcUrl: svm.rpcUrl });
        client.register('solana:*', svm.wrap ? svm.wrap(scheme) : scheme);
        const v1 = new ExactSvmSchemeV1(svm.signer, { rpcUrl: svm.rpcUrl });
        client.registerV1('solana-devnet', svm.wrap ? svm.wrap(v1) : v1);
      }
      client.setSpendControls(spendControls);
      paying = wrapFetchV2(fetchImpl, client);
    } else if (version === 1 && svm) {
      // The legacy client signs with a Solana signer and asks the RPC at svmConfig.rpcUrl.
      paying = wrapFetchV1(fetchImpl, svm.signer, BigInt(maxValue), undefined, { svmConfig: { rpcUrl: svm.rpcUrl } });
    } else if (version === 1) {
      paying = wrapFetchV1(fetchImpl, v1Signer(key, network), BigInt(maxValue));
    } else {
      throw new Error(`buyer: version ${version} is not 1 or 2`);
    }
    let res;
    try {
      res = await paying(url, { method, headers: { ...headers }, body, signal });
    } catch (err) {
      return { status: null, headers: {}, body: '', json: null, paymentResponse: null, paymentRequired: null, paymentHeader: null, exchanges, error: errorText(err) };
    }
    return await summarize(res, exchanges);
  } finally {
    if (own) await d.close();
  }
}

/**
 * send makes one plain request (no payment logic), e.g. to replay or tamper with a captured payment header,
 * and resolves to the same result shape as buy.
 */
export async function send(url, { proxy, ca, tunnel, dispatcher, method = 'GET', headers = {}, body } = {}) {
  const own = !dispatcher;
  const d = dispatcher ?? makeDispatcher({ proxy, ca, tunnel });
  const exchanges = [];
  try {
    const res = await recordingFetch(d, exchanges)(url, { method, headers, body });
    return await summarize(res, exchanges);
  } finally {
    if (own) await d.close();
  }
}

/** encodePayment base64-encodes a payment payload the way both SDKs do (standard alphabet, padded). */
export function encodePayment(payload) {
  return Buffer.from(JSON.stringify(payload), 'utf8').toString('base64');
}

async function main() {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        url: { type: 'string' },
        version: { type: 'string', default: '2' },
        proxy: { type: 'string' },
        ca: { type: 'string' },
        header: { type: 'string', multiple: true, default: [] },
        method: { type: 'string', default: 'GET' },
        network: { type: 'string', default: 'base' },
        key: { type: 'string', default: BUYER_KEY },
        tunnel: { type: 'boolean', default: false },
      },
    }));
  } catch (err) {
    console.error(`buyer: ${err.message}`);
    return 2;
  }
  const version = Number(values.version);
  if (!values.url || (version !== 1 && version !== 2)) {
    console.error('buyer: usage: --url U [--version 2|1] [--proxy P|env] [--ca FILE] [--header "K: V"]…');
    return 2;
  }
  const headers = {};
  for (const h of values.header) {
    const i = h.indexOf(':');
    if (i <= 0) {
      console.error(`buyer: --header ${JSON.stringify(h)} is not "Name: value"`);
      return 2;
    }
    headers[h.slice(0, i).trim()] = h.slice(i + 1).trim();
  }
  let ca;
  if (values.ca) {
    try {
      ca = fs.readFileSync(values.ca, 'utf8');
    } catch (err) {
      console.error(`buyer: --ca: ${err.message}`);
      return 2;
    }
  }
  let result;
  try {
    result = await buy(values.url, { version, proxy: values.proxy, ca, headers, method: values.method, network: values.network, key: values.key, tunnel: values.tunnel });
  } catch (err) {
    console.log(JSON.stringify({ status: null, error: errorText(err) }));
    return 1;
  }
  const { exchanges, ...rest } = result;
  console.log(JSON.stringify({ ...rest, exchanges: exchanges.map((e) => ({ method: e.method, url: e.url, status: e.status })) }, null, 2));
  return result.status === null ? 1 : 0;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  main().then((code) => { process.exitCode = code; });
}
