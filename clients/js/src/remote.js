// Remote screening with payguard serve's POST /v1/preflight: the service gathers what the process cannot
// (the OFAC list, domain age and DNS) for the selected offer. Explicit only (options.remote). With plain
// fetch it asks the free trial and never pays: a 402 is a failed screening, not a payment. Paid screening
// goes through options.remoteFetch, a fetch wrapped with a separate guarded client (feeGuard), never the
// merchant guard itself.

import { snakeRules } from './rules.js';

const DECISIONS = new Set(['allow', 'hold', 'block']);
const TIMEOUT_MS = 10_000;

/**
 * remoteScreen answers {ok: true, decision, reasons, result} or {ok: false, error}. It never throws.
 */
export async function remoteScreen(options, { paymentRequired, selected, resourceUrl, rules }) {
  const paid = typeof options.remoteFetch === 'function';
  const url = new URL('/v1/preflight', options.remoteUrl);
  if (!paid) url.searchParams.set('trial', '1');
  // Screen only the selected offer; caps are the guard's (its budget is checked locally, under its lock).
  const body = { challenge: { ...paymentRequired, accepts: [selected] }, rules: snakeRules(rules) };
  if (resourceUrl) body.resource_url = resourceUrl;
  try {
    const res = await (paid ? options.remoteFetch : fetch)(url, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body),
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
    if (res.status === 402) return { ok: false, error: 'the screening service asked for payment (trial used up); not paying' };
    if (!res.ok) return { ok: false, error: `the screening service answered ${res.status}` };
    const result = await res.json();
    if (!DECISIONS.has(result?.decision) || !Array.isArray(result.reasons) || result.reasons.some((r) => typeof r !== 'string')) {
      return { ok: false, error: 'the screening service answered no usable decision' };
    }
    return { ok: true, decision: result.decision, reasons: result.reasons, result };
  } catch (e) {
    return { ok: false, error: e.message };
  }
}
