// One decision for one x402 challenge, as the Go engine's preflight makes it (preflight/engine.go evaluate):
// read the options, find the merchant domain, ask the screener about the judged payee and the domain, and
// let policy decide. The guard calls it with the one selected offer; the vector tests with whole challenges.

import { evaluate, merchantDomain, optionFacts, payeeIndex } from './policy.js';

/**
 * challengeDomain finds the merchant host: the v2 resource.url, else the first v1 requirement resource,
 * else resourceUrl (preflight/options.go merchantDomain).
 */
export function challengeDomain(paymentRequired, accepts, resourceUrl) {
  const candidates = [];
  const res = paymentRequired?.resource;
  if (paymentRequired?.x402Version !== 1 && res && typeof res === 'object') candidates.push(res.url);
  if (paymentRequired?.x402Version === 1) for (const a of accepts) candidates.push(a?.resource);
  candidates.push(resourceUrl);
  for (const c of candidates) {
    const d = merchantDomain(c);
    if (d) return d;
  }
  return '';
}

/**
 * decideChallenge decides a challenge's options.
 * @param {object} a
 * @param {object} a.paymentRequired the challenge (x402Version, resource)
 * @param {object[]} a.accepts the options to judge (the guard passes only the selected one)
 * @param {object} a.rules normalized rules
 * @param {bigint} a.spentToday micro-dollars spent (and reserved) today
 * @param {(q: {payTo: string, domain: string}) => {sanctions: object, domain: object}} [a.screen]
 *   the screener's facts; without one sanctions data is unavailable and domain facts unknown
 * @param {string} [a.resourceUrl] the request URL, when the challenge names no resource
 */
export function decideChallenge({ paymentRequired, accepts, rules, spentToday = 0n, screen, resourceUrl }) {
  const version = paymentRequired?.x402Version === 1 ? 1 : 2;
  const options = accepts.map((a) => optionFacts(a ?? {}, version));
  const domain = challengeDomain(paymentRequired, accepts, resourceUrl);
  const facts = { options, merchantDomain: domain, merchantName: '', spentToday, rules, domain: {} };
  if (options.length > 0) {
    const judged = payeeIndex(options, rules);
    const payTo = judged >= 0 ? options[judged].payTo : '';
    const answer = screen ? screen({ payTo, domain }) : { sanctions: { state: 'unavailable' }, domain: {} };
    facts.domain = domain ? answer.domain ?? {} : {};
    // As the engine: nothing to screen when the rule is off or no payee is judged (no merchant name here).
    facts.sanctions = !rules.screenSanctions || payTo === '' ? { state: 'nothing' } : answer.sanctions;
  }
  return evaluate(facts);
}

/**
 * judgedChallenge is the challenge as the guard judges it, the proxy's way (proxy/decide.go
 * decisionChallenge): the merchant is the URL the agent requested, never the seller's claim. The v2
 * resource.url is replaced by that URL (emptied when it is unknown) and every v1 accepts[].resource is
 * dropped, so the domain rules, the remote screening and the sidecar all see the requested URL or nothing
 * (hold: could not determine merchant domain).
 * @param {object} paymentRequired the challenge as received
 * @param {string|undefined} requestedUrl the URL the agent requested (after redirects), if known
 */
export function judgedChallenge(paymentRequired, requestedUrl) {
  const pr = paymentRequired && typeof paymentRequired === 'object' ? paymentRequired : {};
  const out = { ...pr };
  if (pr.x402Version !== 1) out.resource = { ...(pr.resource && typeof pr.resource === 'object' ? pr.resource : {}), url: requestedUrl ?? '' };
  if (Array.isArray(pr.accepts)) out.accepts = pr.accepts.map(stripResource);
  return out;
}

/** stripResource drops a requirement's own (v1) resource claim. */
export function stripResource(req) {
  if (!req || typeof req !== 'object' || !('resource' in req)) return req;
  const { resource, ...rest } = req;
  return rest;
}
