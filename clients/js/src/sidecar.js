// The sidecar option: decide through a local payguard proxy's approval API (POST /v1/decide, bearer token),
// so that the budget is the sidecar's ledger (fleet-wide when its store is Redis) and its rules, sanctions
// list and approval queue apply. The sidecar reserves what it allows; a hold waits in its approval queue,
// where a person (or this guard's onHold, through POST /v1/holds/{id}/approve) may approve it.

const TIMEOUT_MS = 60_000; // the sidecar may wait up to its hold_wait for a person

/** sidecarCall posts to the sidecar's approval API; answers the parsed JSON or throws. */
async function sidecarCall(sidecar, path, body) {
  const res = await (sidecar.fetch ?? fetch)(new URL(path, sidecar.url), {
    method: 'POST',
    headers: {
      'content-type': 'application/json', authorization: `Bearer ${sidecar.token}`,
      // The agent's identity, as it would give it to the proxy: its rules, cap and mode apply.
      ...(sidecar.agent ? { 'proxy-authorization': `Basic ${btoa(`${sidecar.agent.id}:${sidecar.agent.secret}`)}` } : {}),
    },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(TIMEOUT_MS),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`sidecar ${path} answered ${res.status}: ${text.slice(0, 200)}`);
  return JSON.parse(text);
}

/**
 * sidecarDecide asks the sidecar about one selected offer for the URL the agent requested (omitted when the
 * guard cannot know it: the sidecar then judges the domain unknown and holds; the seller's resource.url is
 * never sent as that URL). On a hold it asks onHold and, approved, approves the sidecar's hold and asks again
 * (the approval is used once, with a reservation). Approving needs the admin token: with the decide-only
 * token the approval is refused (401) and the payment with it.
 * @returns {Promise<{decision: string, reasons: string[], amountMicros: bigint, approved: boolean, holdId?: string, receipt?: object}>}
 */
export async function sidecarDecide(sidecar, { paymentRequired, selected, requestedUrl }, askHold) {
  const body = { challenge: { ...paymentRequired, accepts: [selected] } };
  if (requestedUrl) body.url = requestedUrl;
  const first = await sidecarCall(sidecar, '/v1/decide', body);
  const answer = (d, approved) => ({
    decision: d.decision, reasons: d.reasons ?? [], amountMicros: BigInt(d.amount_micros ?? 0), approved, holdId: d.hold_id,
    receipt: d.result?.receipt ?? (d.receipt_id ? { id: d.receipt_id } : null),
  });
  if (first.decision === 'allow') return answer(first, true);
  if (first.decision !== 'hold' || !first.hold_id) return answer(first, false);
  if (!(await askHold(answer(first, false)))) return answer(first, false);
  await sidecarCall(sidecar, `/v1/holds/${encodeURIComponent(first.hold_id)}/approve`, { by: 'payguard guard onHold' });
  const second = await sidecarCall(sidecar, '/v1/decide', body);
  return answer(second, second.decision === 'allow');
}
