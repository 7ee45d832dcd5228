// guard(client, options): payguard's decision inside the agent's process, in the official x402 client's hooks,
// so a payment the rules refuse is never signed (SPEC "Client guard libraries").
//
// Where it sits: on an x402HTTPClient (what wrapFetchWithPayment and the other HTTP wrappers drive) the guard
// registers two hooks. onPaymentRequired sees the challenge and the URL the agent requested (the response URL,
// after redirects): the guard decides there, on the option the engine would choose, with that URL as the
// merchant, and a refusal throws PaymentRefusedError straight to the caller. A payment policy then steers the
// SDK's selection to the approved option, and the before-payment-creation hook lets only that option be signed.
// On a bare x402Client the guard cannot see the URL: it decides in the before-payment-creation hook with the
// merchant domain unknown (hold: could not determine merchant domain), never on the seller's resource.url.

import { Budget } from './budget.js';
import { decideChallenge, judgedChallenge, stripResource } from './decide.js';
import { optionFacts, selectIndex } from './policy.js';
import { remoteScreen } from './remote.js';
import { sidecarDecide } from './sidecar.js';
import { normalizeRules } from './rules.js';
import { formatUSD } from './usd.js';
import { sameAddress } from './x402.js';

const RANK = { allow: 0, hold: 1, block: 2 };

/**
 * PaymentRefusedError is what a refused payment throws: decision ("hold" or "block"), reasons (SPEC §5
 * strings, each "decision: text"), the amount, the URL judged, and the signed receipt when the decision was
 * made by payguard serve or a sidecar (null for a local decision).
 */
export class PaymentRefusedError extends Error {
  constructor(d) {
    super(`payguard: ${d.reasons.join('; ')}`);
    this.name = 'PaymentRefusedError';
    this.decision = d.decision;
    this.reasons = d.reasons;
    this.amountUsd = d.amountUsd ?? '0';
    this.url = d.url ?? null;
    this.holdId = d.holdId ?? null;
    this.receipt = d.receipt ?? null;
  }
}

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
 * @property {{url: string, token: string, agent?: {id: string, secret: string}, fetch?: typeof fetch}} [sidecar] decide through a local payguard
 *   proxy's POST /v1/decide (its decide-only token): its rules, its ledger (fleet-wide on Redis), its queue
 * @property {() => Date} [now] the clock (tests inject one)
 * @property {(event: object) => void} [onDecision] told every decision (a JSON-serialisable event); what it
 *   throws is ignored
 */

export class Guard {
  #urls = new WeakMap(); // challenge object → the URL the agent requested (onPaymentRequired)
  #tickets = new WeakMap(); // challenge object → the option approved for it, with its reservation
  #approved = new WeakSet(); // requirement objects approved and not yet signed (steers the SDK's selection)
  #attached = new WeakSet();

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
   * decide judges one selected offer for the URL the agent requested (resourceUrl; unknown: the merchant
   * domain is unknown and the decision holds), reserves its amount when it is approved, and answers the event
   * {decision, reasons, amountUsd, amountMicros, approved, url, holdId?, receipt?}. Decisions are serialized.
   * The challenge's own resource.url (or v1 accepts[].resource) is the seller's claim and is never judged.
   */
  async decide({ paymentRequired, selected, resourceUrl }) {
    return this.#report(await this.#decide({ paymentRequired, selected, resourceUrl }));
  }

  async #decide({ paymentRequired, selected, resourceUrl }) {
    const url = typeof resourceUrl === 'string' && resourceUrl !== '' ? resourceUrl : undefined;
    const judged = judgedChallenge(paymentRequired, url);
    const offer = selected ? stripResource(selected) : undefined;
    const accepts = offer ? [offer] : [];
    if (this.options.sidecar) return { ...(await this.#sidecar({ paymentRequired, judged, selected, accepts, url })), url };
    // Remote facts are gathered outside the lock (they do not depend on the budget); caps are decided inside it.
    const remote = this.remote && offer ? await remoteScreen(this.options, { paymentRequired: judged, selected: offer, resourceUrl: url, rules: this.rules }) : null;
    // onError "allow" (explicit) decides a failed remote screening locally, without that protection.
    const waived = remote !== null && !remote.ok && this.onError === 'allow';
    const screened = remote !== null && (remote.ok || waived);
    const held = await this.budget.serialize(() => {
      const local = decideChallenge({
        paymentRequired: judged, accepts, rules: this.rules, spentToday: this.budget.spentToday(), resourceUrl: url,
        // Without remote facts sanctions data is unavailable: with screenSanctions on, that holds (fail closed).
        screen: screened ? () => ({ sanctions: { state: 'nothing' }, domain: {} }) : undefined,
      });
      const d = remote && !waived ? combine(local, remote) : local;
      // A hold reserves too (its option's amount), so that concurrent decisions see it while a person decides;
      // refused, it is given back.
      const reservation = d.decision === 'block' ? null : this.budget.reserve(d.amountMicros);
      return { ...d, reservation, receipt: remote?.result?.receipt ?? null, url };
    });
    if (held.decision === 'hold') {
      const approved = await this.#askHold(held, paymentRequired, selected);
      if (!approved) await this.#release(held.reservation);
      return { ...held, approved };
    }
    return { ...held, approved: held.decision === 'allow' };
  }

  async #release(reservation) {
    if (reservation) await this.budget.serialize(() => this.budget.release(reservation));
  }

  // The sidecar decides with its own rules and ledger. Rules given to the guard as well stay a floor, checked
  // first, so that a local refusal never reserves anything in the sidecar.
  async #sidecar({ paymentRequired, judged, selected, accepts, url }) {
    const local = this.options.rules === undefined ? { decision: 'allow' } : decideChallenge({
      paymentRequired: judged, accepts, rules: this.rules, resourceUrl: url,
      screen: () => ({ sanctions: { state: 'nothing' }, domain: {} }), // the sidecar screens
    });
    if (local.decision === 'block' || (local.decision === 'hold' && !(await this.#askHold(local, paymentRequired, selected)))) {
      return { ...local, approved: false };
    }
    if (!selected) return { decision: 'block', reasons: ['block: no payment options found in input'], amountMicros: 0n, approved: false };
    return sidecarDecide(this.options.sidecar, { paymentRequired, selected: accepts[0], requestedUrl: url },
      (held) => this.#askHold(held, paymentRequired, selected));
  }

  async #askHold(d, paymentRequired, selected) {
    if (typeof this.options.onHold !== 'function') return false;
    try {
      return (await this.options.onHold(holdInfo(d, paymentRequired, selected))) === true;
    } catch {
      return false;
    }
  }

  // #report tells onDecision (a failure there is the callback's, never the payment's) and answers the event.
  #report(d) {
    const event = {
      decision: d.decision, reasons: d.reasons, amountUsd: formatUSD(d.amountMicros ?? 0n),
      amountMicros: Number(d.amountMicros ?? 0n), approved: d.approved === true, url: d.url ?? null,
    };
    if (d.holdId) event.holdId = d.holdId;
    if (d.receipt) event.receipt = d.receipt;
    const cb = this.options.onDecision;
    if (typeof cb === 'function') {
      try {
        const r = cb(event);
        if (r && typeof r.then === 'function') r.then(undefined, () => {});
      } catch {
        // ignored: logging must not move money
      }
    }
    return event;
  }

  /**
   * onPaymentRequired is the x402HTTPClient hook: it learns the URL the agent requested and decides the
   * challenge there, on the option the engine would choose; a refusal throws PaymentRefusedError.
   */
  onPaymentRequired = async ({ paymentRequired, requestUrl }) => {
    if (typeof requestUrl === 'string' && requestUrl !== '') this.#urls.set(paymentRequired, requestUrl);
    const accepts = Array.isArray(paymentRequired?.accepts) ? paymentRequired.accepts : [];
    const selected = accepts.length ? accepts[this.#selectIndex(paymentRequired?.x402Version, accepts)] : undefined;
    let d;
    try {
      d = await this.#decide({ paymentRequired, selected, resourceUrl: this.#urls.get(paymentRequired) });
    } catch (e) {
      throw new PaymentRefusedError(this.#report({ decision: 'hold', reasons: [`hold: guard failed: ${e.message}`], amountMicros: 0n }));
    }
    const event = this.#report(d);
    if (!d.approved) throw new PaymentRefusedError(event);
    this.#tickets.set(paymentRequired, { selected, reservation: d.reservation });
    this.#approved.add(selected);
    return undefined;
  };

  /**
   * policy is the x402Client payment policy: the SDK's selection among the options it can pay, narrowed to
   * the one payguard approved, else to the one the engine would choose (cheapest acceptable, SPEC §4.2).
   */
  policy = (x402Version, requirements) => {
    const approved = requirements.find((r) => this.#approved.has(r));
    if (approved) return [approved];
    if (this.options.sidecar && this.options.rules === undefined) return requirements; // the sidecar's rules are not known here
    return requirements.length ? [requirements[this.#selectIndex(x402Version, requirements)]] : requirements;
  };

  #selectIndex(version, accepts) {
    return selectIndex(accepts.map((a) => optionFacts(a ?? {}, version === 1 ? 1 : 2)), this.rules);
  }

  /** hook is the x402Client before-payment-creation hook: undefined pays; a refusal throws PaymentRefusedError. */
  hook = async (context) => {
    const { paymentRequired, selectedRequirements: selected } = context;
    const ticket = this.#tickets.get(paymentRequired);
    if (ticket) {
      // Decided in onPaymentRequired: only the approved option may be signed, once.
      this.#tickets.delete(paymentRequired);
      this.#approved.delete(ticket.selected);
      if (sameTerms(ticket.selected, selected)) return undefined;
      await this.#release(ticket.reservation);
      throw new PaymentRefusedError(this.#report({
        decision: 'block', reasons: ['block: the client selected another option than the one payguard approved'], amountMicros: 0n,
      }));
    }
    let d;
    try {
      d = await this.#decide({ paymentRequired, selected, resourceUrl: this.#urls.get(paymentRequired) });
    } catch (e) {
      throw new PaymentRefusedError(this.#report({ decision: 'hold', reasons: [`hold: guard failed: ${e.message}`], amountMicros: 0n }));
    }
    const event = this.#report(d);
    if (d.approved) return undefined;
    throw new PaymentRefusedError(event);
  };

  /**
   * attach registers the guard on an official client and returns it: an x402HTTPClient (@x402/core,
   * @x402/fetch 2.x; the guard then sees the requested URL) or a bare x402Client (it cannot: every payment
   * holds on the unknown merchant domain unless decided with a URL through decide()).
   */
  attach(target) {
    const http = target && typeof target.onPaymentRequired === 'function' && target.client ? target : null;
    const client = http ? target.client : target;
    if (!client || typeof client.onBeforePaymentCreation !== 'function') {
      throw new TypeError('payguard: guard() needs an x402HTTPClient or x402Client from @x402/core (or @x402/fetch) 2.x');
    }
    if (!this.#attached.has(client)) {
      this.#attached.add(client);
      client.onBeforePaymentCreation(this.hook);
      if (typeof client.registerPolicy === 'function') client.registerPolicy(this.policy);
    }
    if (http && !this.#attached.has(http)) {
      this.#attached.add(http);
      http.onPaymentRequired(this.onPaymentRequired);
    }
    return target;
  }

  /** spent is today's budget: {day, spentUsd, dailyCapUsd} (reservations included). */
  spent() {
    const s = this.budget.snapshot();
    return { day: s.day, spentUsd: formatUSD(s.spentMicros), dailyCapUsd: formatUSD(this.rules.dailyCapUsd) };
  }
}

// sameTerms: the selected option pays exactly what was approved (scheme, network, asset, payee, amount).
function sameTerms(a, b) {
  if (a === b) return true;
  if (!a || !b) return false;
  return a.scheme === b.scheme && a.network === b.network && sameAddress(a.asset, b.asset) && sameAddress(a.payTo, b.payTo) &&
    (a.amount ?? a.maxAmountRequired) === (b.amount ?? b.maxAmountRequired);
}

function holdInfo(d, paymentRequired, selected) {
  return { decision: d.decision, reasons: d.reasons, amountUsd: formatUSD(d.amountMicros ?? 0n), requirements: selected, paymentRequired };
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
 * guard attaches a new guard to an official x402 client and returns that client. Give it the x402HTTPClient
 * the fetch wrapper uses, so that it judges the URL the agent requested:
 *   wrapFetchWithPayment(fetch, guard(new x402HTTPClient(client), opts))
 * @param {object} client an x402HTTPClient or x402Client (@x402/core, @x402/fetch 2.x)
 * @param {GuardOptions} [options]
 */
export function guard(client, options = {}) {
  return createGuard(options).attach(client);
}

/** createGuard makes a Guard without attaching it (to read its budget, or to attach it to several clients). */
export const createGuard = (options) => new Guard(options);
