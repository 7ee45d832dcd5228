// The v1 client (x402-fetch 1.x) has no payment hooks: wrapFetchWithPayment(fetch, wallet, maxValue,
// selector) reads the 402 body from the fetch it is given, signs, and retries through the same fetch. So
// the guard wraps that inner fetch: it decides the 402 before x402-fetch sees it, hands on a 402 narrowed to
// the one approved option (the only thing the client can then sign), refuses with a 403 otherwise, and
// lets the paying retry out only when it pays exactly the approved option. The proxy's mechanism, in process.

import { Guard } from './guard.js';
import { optionFacts, selectIndex } from './policy.js';
import { svmPaysExactly } from './svm.js';
import { isSolanaNetwork, sameAddress } from './x402.js';

/**
 * guardV1Fetch returns a fetch to give to x402-fetch's wrapFetchWithPayment:
 *   wrapFetchWithPayment(guardV1Fetch(fetch, {rules}), wallet)
 * @param {typeof fetch} innerFetch
 * @param {Guard|import('./guard.js').GuardOptions} guardOrOptions
 */
export function guardV1Fetch(innerFetch, guardOrOptions = {}) {
  const g = guardOrOptions instanceof Guard ? guardOrOptions : new Guard(guardOrOptions);
  const tickets = new Map(); // request URL → approved requirements, each used once
  return async (input, init = {}) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    const payment = headerValue(init.headers, 'x-payment');
    if (payment !== undefined) {
      const open = tickets.get(url) ?? [];
      const i = open.findIndex((req) => paysExactly(payment, req));
      if (i < 0) return refusal('block', ['block: payment does not match the option payguard approved']);
      open.splice(i, 1);
      if (open.length === 0) tickets.delete(url);
      return innerFetch(input, init);
    }
    const res = await innerFetch(input, init);
    if (res.status !== 402) return res;
    let body;
    try {
      body = await res.clone().json();
    } catch {
      return res; // not an x402 body: nothing the client could pay
    }
    if (body?.x402Version !== 1 || !Array.isArray(body.accepts) || body.accepts.length === 0) {
      return refusal('block', ['block: no payment options found in input']);
    }
    // The guard selects as the engine would (the cheapest acceptable option, else the one a person may
    // approve) and screens only that one.
    // The merchant is the URL this fetch reached (after redirects), never the requirements' resource claim.
    const options = body.accepts.map((a) => optionFacts(a ?? {}, 1));
    const selected = body.accepts[selectIndex(options, g.rules)];
    let d;
    try {
      d = await g.decide({ paymentRequired: body, selected, resourceUrl: res.url || url });
    } catch (e) {
      return refusal('hold', [`hold: guard failed: ${e.message}`]);
    }
    if (!d.approved) return refusal(d.decision, d.reasons);
    tickets.set(url, [...(tickets.get(url) ?? []), selected]);
    const narrowed = JSON.stringify({ ...body, accepts: [selected] });
    const headers = new Headers(res.headers);
    headers.delete('content-length');
    return new Response(narrowed, { status: 402, statusText: res.statusText, headers });
  };
}

function headerValue(headers, name) {
  if (!headers) return undefined;
  if (headers instanceof Headers) return headers.get(name) ?? undefined;
  const entries = Array.isArray(headers) ? headers : Object.entries(headers);
  const hit = entries.find(([k]) => k.toLowerCase() === name);
  return hit ? String(hit[1]) : undefined;
}

// paysExactly decodes an X-PAYMENT header (base64 JSON) and checks it pays the approved requirement: an
// EIP-3009 authorization's payee and value, or a Solana transaction's whole transfer (svm.js).
function paysExactly(header, req) {
  try {
    const p = JSON.parse(Buffer.from(header, 'base64').toString('utf8'));
    if (isSolanaNetwork(req.network)) {
      return p.scheme === req.scheme && p.network === req.network && svmPaysExactly(p?.payload?.transaction, req);
    }
    const auth = p?.payload?.authorization;
    return p.scheme === req.scheme && p.network === req.network && auth && sameAddress(auth.to, req.payTo) &&
      /^\d+$/.test(String(auth.value)) && BigInt(auth.value) === BigInt(req.maxAmountRequired);
  } catch {
    return false;
  }
}

function refusal(decision, reasons) {
  return new Response(JSON.stringify({ decision, reasons }), {
    status: 403, headers: { 'content-type': 'application/json', 'x-payguard-decision': decision },
  });
}
