// guard(client, options): payguard's decision inside the agent's process, in the official x402 client's
// before-payment-creation hook, so a payment the rules refuse is never signed (SPEC "Client guard
// libraries"). The hook sees the one offer the client selected; only that offer is screened.

import { Budget } from './budget.js';
import { decideChallenge } from './decide.js';
import { remoteScreen } from './remote.js';
import { sidecarDecide } from './sidecar.js';
import { normalizeRules } from './rules.js';
import { formatUSD } from './usd.js';

const RANK = { allow: 0, hold: 1, block: 2 };

/** GuardRefused is the error the guard's refusals carry (the SDK wraps the reason in its own Error). */
export const REFUSED_PREFIX = 'payguard';

/**
 * @typedef {object} GuardOptions
 * @property {object} [rules] camelCase rules (maxPerPaymentUsd, holdAboveUsd, dailyCapUsd, allowedNetworks,
 *   usdcOnly, strictAllowlist, newDomainDays, screenSanctions, domainAllowlist, domainBlocklist,
 *   paytoAllowlist, paytoBlocklist, and the Index rules maxPriceMultiple, requireLive, holdOnPayToChange)
 * @property {boolean} [remote] screen remotely with payguard serve's /v1/preflight (explicit; off by default)
 * @property {string} [remoteUrl] the screening service's origin (required with remote)
 * @property {typeof fetch} [remoteFetch] how to call it: plain fetch (the free trial, never paying) by
 *   default; for paid screening a fetch wrapped with a *separate* guarded client (see feeGuard)
 * @property {(hold: object) => boolean|Promise<boolean>} [onHold] asked on a hold; true pays, anything else refuses
 * @property {'hold'|'allow'} [onError] a failed or unknown remote result: hold (default) or, explicitly,
 *   decide locally without remote screening ("allow" disables that protection)
 * @property {{url: string, token: string, fetch?: typeof fetch}} [sidecar] decide through a local payguard
 *   proxy's approval API (POST /v1/decide): its rules, its ledger (fleet-wide on Redis), its approval queue
 * @property {() => Date} [now] the clock (tests inject one)
 * @property {(event: object) => void} [onDecision] told every decision (logging, tests)
 */

export class Guard {
  /** @param {GuardOptions} [options] */
  constructor(options = {}) {
    const known = ['rules', 'remote', 'remoteUrl', 'remoteFetch', 'onHold', 'onError', 'sidecar', 'now', 'onDecision'];
    for (const k of Object.keys(options)) if (!known.includes(k)) throw new TypeError(`payguard: unknown option "${k}"`);
    this.rules = normalizeRules(options.rules ?? {});
    this.remote = options.remote === true;
    if (options.remote !== undefined && typeof options.remote !== 'boolean') throw new TypeError('payguard: remote must be a boolean');
    if (this.remote && !options.remoteUrl) throw new TypeError('payguard: remote screening needs remoteUrl');
    if (options.onError !== undefined && !['hold', 'allow'].includes(options.onError)) {
      throw new TypeError('payguard: onError must be "hold" or "allow"');
    }
    if (options.sidecar && (!options.sidecar.url || !options.sidecar.token)) throw new TypeError('payguard: sidecar needs url and token');
    if (options.sidecar && this.remote) throw new TypeError('payguard: choose remote or sidecar, not both');
    this.options = options;
    this.onError = options.onError ?? 'hold';
    this.budget = new Budget({ now: options.now });
  }

  /**
   * decide judges one selected offer, reserves its amount when it is approved, and answers
   * {decision, reasons, amountMicros, approved}. Decisions are serialized.
   */
  async decide({ paymentRequired, selected, resourceUrl }) {
    if (this.options.sidecar) return this.#sidecar({ paymentRequired, selected, resourceUrl });
    // Remote facts are gathered outside the lock (they do not depend on the budget); caps are decided inside it.
    const remote = this.remote ? await remoteScreen(this.options, { paymentRequired, selected, resourceUrl, rules: this.rules }) : null;
    // onError "allow" (explicit) decides a failed remote screening locally, without that protection.
    const waived = remote !== null && !remote.ok && this.onError === 'allow';
    const screened = remote !== null && (remote.ok || waived);
    const held = await this.budget.serialize(() => {
      const local = decideChallenge({
        paymentRequired, accepts: [selected], rules: this.rules, spentToday: this.budget.spentToday(), resourceUrl,
        // Without remote facts sanctions data is unavailable: with screenSanctions on, that holds (fail closed).
        screen: screened ? () => ({ sanctions: { state: 'nothing' }, domain: {} }) : undefined,
      });
      const d = remote && !waived ? combine(local, remote) : local;
      // A hold reserves too, so that concurrent decisions see it while a person decides; refused, it is given back.
      const reservation = d.decision === 'block' ? null : this.budget.reserve(d.amountMicros);
      return { ...d, reservation };
    });
    if (held.decision === 'hold') {
      const approved = await this.#askHold(held, paymentRequired, selected);
      if (!approved) await this.budget.serialize(() => this.budget.release(held.reservation));
      return this.#report({ ...held, approved });
    }
    return this.#report({ ...held, approved: held.decision === 'allow' });
  }

  // The sidecar decides with its own rules and ledger. Rules given to the guard as well stay a floor, checked
  // first, so that a local refusal never reserves anything in the sidecar.
  async #sidecar({ paymentRequired, selected, resourceUrl }) {
    const local = this.options.rules === undefined ? { decision: 'allow' } : decideChallenge({
      paymentRequired, accepts: [selected], rules: this.rules, resourceUrl,
      screen: () => ({ sanctions: { state: 'nothing' }, domain: {} }), // the sidecar screens
    });
    if (local.decision === 'block' || (local.decision === 'hold' && !(await this.#askHold(local, paymentRequired, selected)))) {
      return this.#report({ ...local, approved: false });
    }
    const d = await sidecarDecide(this.options.sidecar, { paymentRequired, selected, resourceUrl },
      (held) => this.#askHold(held, paymentRequired, selected));
    return this.#report(d);
  }

  async #askHold(d, paymentRequired, selected) {
    if (typeof this.options.onHold !== 'function') return false;
    try {
      return (await this.options.onHold(holdInfo(d, paymentRequired, selected))) === true;
    } catch {
      return false;
    }
  }

  #report(d) {
    const { reservation, ...event } = d;
    this.options.onDecision?.(event);
    return event;
  }

  /** hook is the x402Client before-payment-creation hook: undefined pays, {abort, reason} refuses. */
  hook = async (context) => {
    let d;
    try {
      d = await this.decide({ paymentRequired: context.paymentRequired, selected: context.selectedRequirements });
    } catch (e) {
      return { abort: true, reason: `${REFUSED_PREFIX}: hold: guard failed: ${e.message}` };
    }
    if (d.approved) return undefined;
    return { abort: true, reason: `${REFUSED_PREFIX}: ${d.decision}: ${d.reasons.join('; ')}` };
  };

  /** attach registers the guard on an official x402Client (@x402/core 2.x). */
  attach(client) {
    if (!client || typeof client.onBeforePaymentCreation !== 'function') {
      throw new TypeError('payguard: guard() needs an x402Client from @x402/core (or @x402/fetch) 2.x');
    }
    client.onBeforePaymentCreation(this.hook);
    return client;
  }

  /** spent is today's budget: {day, spentUsd, dailyCapUsd} (reservations included). */
  spent() {
    const s = this.budget.snapshot();
    return { day: s.day, spentUsd: formatUSD(s.spentMicros), dailyCapUsd: formatUSD(this.rules.dailyCapUsd) };
  }
}

function holdInfo(d, paymentRequired, selected) {
  return { decision: d.decision, reasons: d.reasons, amountUsd: formatUSD(d.amountMicros), requirements: selected, paymentRequired };
}

// combine merges the remote service's answer with the local caps: the stronger decision wins, every reason kept.
function combine(local, remote) {
  if (!remote.ok) {
    const reasons = [`hold: remote screening failed: ${remote.error}`, ...local.reasons.filter((r) => !r.startsWith('allow:'))];
    return { ...local, decision: RANK[local.decision] > RANK.hold ? local.decision : 'hold', reasons: order(reasons) };
  }
  const decision = RANK[remote.decision] > RANK[local.decision] ? remote.decision : local.decision;
  const all = [...remote.reasons, ...local.reasons].filter((r) => decision === 'allow' || !r.startsWith('allow:'));
  return { ...local, decision, reasons: order([...new Set(all)]) };
}

const order = (reasons) => reasons
  .map((r, i) => [r, i]).sort((a, b) => (RANK[b[0].split(':')[0]] ?? 2) - (RANK[a[0].split(':')[0]] ?? 2) || a[1] - b[1])
  .map(([r]) => r);

/**
 * feeGuard guards the separate client that pays for remote screening: exactly the service's payTo, network
 * and (USDC) asset, a small per-call cap and a budget of its own. Give the fetch wrapped with it as
 * remoteFetch; never the merchant guard's own client (that would screen its screening recursively).
 * @param {object} client an x402Client used only for screening fees
 * @param {{payTo: string, network: string, serviceUrl: string, maxPerPaymentUsd?: number|string,
 *   dailyCapUsd?: number|string, now?: () => Date}} terms
 */
export function feeGuard(client, { payTo, network, serviceUrl, maxPerPaymentUsd = 0.02, dailyCapUsd = 1, now }) {
  if (!payTo || !network || !serviceUrl) throw new TypeError('payguard: feeGuard needs payTo, network and serviceUrl');
  return guard(client, {
    now,
    rules: {
      maxPerPaymentUsd, holdAboveUsd: maxPerPaymentUsd, dailyCapUsd, allowedNetworks: [network], usdcOnly: true,
      strictAllowlist: true, paytoAllowlist: [payTo], domainAllowlist: [new URL(serviceUrl).hostname],
      screenSanctions: false, // the service's own wallet, pinned exactly above
    },
  });
}

/**
 * guard wraps an official x402 client: it returns the same client with the guard in its
 * before-payment-creation hook. Use it where the client goes: wrapFetchWithPayment(fetch, guard(client, opts)).
 * @param {object} client an x402Client (@x402/core, @x402/fetch 2.x)
 * @param {GuardOptions} [options]
 */
export function guard(client, options = {}) {
  return createGuard(options).attach(client);
}

/** createGuard makes a Guard without attaching it (to read its budget, or to attach it to several clients). */
export const createGuard = (options) => new Guard(options);
