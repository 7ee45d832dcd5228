// Type declarations for @payguard/guard (the sources are plain JavaScript). Checked with `tsc --strict` on the
// README's examples by test/types.test.mjs.

/** Dollars as a number or a decimal string ("0.25"); kept exactly as micro-dollars. */
export type Usd = number | string;

/** The rules in the JavaScript API's camelCase names (SPEC §3.1); anything left out takes SPEC's default. */
export interface Rules {
  maxPerPaymentUsd?: Usd;
  holdAboveUsd?: Usd;
  dailyCapUsd?: Usd;
  allowedNetworks?: string[];
  usdcOnly?: boolean;
  strictAllowlist?: boolean;
  newDomainDays?: number;
  screenSanctions?: boolean;
  maxPriceMultiple?: number | null;
  requireLive?: boolean;
  holdOnPayToChange?: boolean;
  domainAllowlist?: string[];
  domainBlocklist?: string[];
  paytoAllowlist?: string[];
  paytoBlocklist?: string[];
}

/** Rules read over the defaults: money in micro-dollars. */
export interface NormalizedRules {
  maxPerPaymentUsd: bigint;
  holdAboveUsd: bigint;
  dailyCapUsd: bigint;
  allowedNetworks: string[];
  usdcOnly: boolean;
  strictAllowlist: boolean;
  newDomainDays: number;
  screenSanctions: boolean;
  maxPriceMultiple: number | null;
  requireLive: boolean;
  holdOnPayToChange: boolean;
  domainAllowlist: string[];
  domainBlocklist: string[];
  paytoAllowlist: string[];
  paytoBlocklist: string[];
}

export type DecisionKind = 'allow' | 'hold' | 'block';

/** One x402 payment option as the seller wrote it (v2 `amount`, v1 `maxAmountRequired`). */
export interface PaymentRequirements {
  scheme: string;
  network: string;
  asset: string;
  payTo: string;
  amount?: string;
  maxAmountRequired?: string;
  maxTimeoutSeconds?: number;
  extra?: Record<string, unknown>;
  [k: string]: unknown;
}

/** A 402 challenge (x402 PaymentRequired). */
export interface PaymentRequired {
  x402Version: number;
  resource?: { url?: string; description?: string; mimeType?: string; [k: string]: unknown };
  accepts: PaymentRequirements[];
  [k: string]: unknown;
}

/** What a person (or onHold) is asked about. */
export interface HoldInfo {
  decision: DecisionKind;
  reasons: string[];
  /** The amount of the option held, in dollars ("0.5"). */
  amountUsd: string;
  requirements: PaymentRequirements | undefined;
  paymentRequired: PaymentRequired;
}

/** Every decision, as onDecision is told it and decide() answers it: plain JSON types only. */
export interface DecisionEvent {
  decision: DecisionKind;
  reasons: string[];
  amountUsd: string;
  /** Micro-dollars (exact below $9 billion). */
  amountMicros: number;
  approved: boolean;
  /** The URL judged: the one the agent requested; null when the guard could not know it. */
  url: string | null;
  holdId?: string;
  /** The signed receipt, when payguard serve (remote) or a sidecar decided. */
  receipt?: Record<string, unknown>;
}

export interface SidecarOptions {
  /** The sidecar proxy's admin origin, e.g. http://127.0.0.1:8403 */
  url: string;
  /** Its decide-only token (<data_dir>/decide-token): it decides, never approves. */
  token: string;
  /** The agent's id and secret (payguard agents add), sent as Proxy-Authorization: its rules, cap and mode apply. */
  agent?: { id: string; secret: string };
  fetch?: typeof fetch;
}

export interface GuardOptions {
  rules?: Rules;
  remote?: boolean;
  remoteUrl?: string;
  remoteFetch?: typeof fetch;
  onHold?: (hold: HoldInfo) => boolean | Promise<boolean>;
  onError?: 'hold' | 'allow';
  sidecar?: SidecarOptions;
  now?: () => Date;
  onDecision?: (event: DecisionEvent) => unknown;
}

/** Thrown (rejected) for a refused payment: nothing was signed. */
export class PaymentRefusedError extends Error {
  readonly name: 'PaymentRefusedError';
  readonly decision: DecisionKind;
  readonly reasons: string[];
  readonly amountUsd: string;
  readonly url: string | null;
  readonly holdId: string | null;
  readonly receipt: Record<string, unknown> | null;
  constructor(event: Partial<DecisionEvent> & { decision: DecisionKind; reasons: string[] });
}

/** The official clients the guard attaches to (structurally: @x402/core's x402Client and x402HTTPClient). */
export interface X402ClientLike {
  onBeforePaymentCreation(hook: (context: any) => Promise<any> | any): unknown;
  registerPolicy?(policy: (x402Version: number, requirements: any[]) => any[]): unknown;
}
export interface X402HTTPClientLike {
  onPaymentRequired(hook: (context: any) => Promise<any> | any): unknown;
}

export class Guard {
  constructor(options?: GuardOptions);
  readonly rules: NormalizedRules;
  /** Attach to an x402HTTPClient (the guard then judges the requested URL) or a bare x402Client; returns it. */
  attach<T extends X402ClientLike | X402HTTPClientLike>(client: T): T;
  /** Decide one selected offer for the URL the agent requested (unknown: the decision holds). */
  decide(args: { paymentRequired: PaymentRequired; selected: PaymentRequirements | undefined; resourceUrl?: string }): Promise<DecisionEvent>;
  /** Today's budget, reservations included. */
  spent(): { day: string; spentUsd: string; dailyCapUsd: string };
}

/** Attach a new guard and return the client: wrapFetchWithPayment(fetch, guard(new x402HTTPClient(client), opts)). */
export function guard<T extends X402ClientLike | X402HTTPClientLike>(client: T, options?: GuardOptions): T;
export function createGuard(options?: GuardOptions): Guard;
export function feeGuard<T extends X402ClientLike | X402HTTPClientLike>(client: T, terms: {
  payTo: string; network: string; serviceUrl: string; maxPerPaymentUsd?: Usd; dailyCapUsd?: Usd; now?: () => Date;
}): T;

/** The v1 client (x402-fetch 1.x): wrapFetchWithPayment(guardV1Fetch(fetch, {rules}), walletClient). */
export function guardV1Fetch(innerFetch: typeof fetch, guardOrOptions?: Guard | GuardOptions): typeof fetch;

export const RECEIPT_TYPE: 'payguard-receipt+jws';
export class ReceiptError extends Error {
  readonly kind: string;
  constructor(kind: string, message: string);
}
export interface ReceiptOptions {
  archival?: boolean;
  /** Seconds; 0 or absent: one hour. */
  maxAgeSeconds?: number;
  /** A clock, a Date, or epoch milliseconds. */
  now?: Date | number | (() => Date | number);
}
export interface ReceiptClaims {
  keyId: string;
  issuedAt: Date;
  [claim: string]: unknown;
}
export function verifyReceipt(receipt: string | object, jwks: string | object, opts?: ReceiptOptions): ReceiptClaims;
export function verifyJWS(jws: string, jwks: string | object, opts?: ReceiptOptions): { payload: string; claims: ReceiptClaims };

export const RULE_NAMES: Readonly<Record<keyof Rules, string>>;
export function defaultRules(): NormalizedRules;
export function normalizeRules(given?: Rules): NormalizedRules;

export function decideChallenge(args: {
  paymentRequired: PaymentRequired;
  accepts: PaymentRequirements[];
  rules: NormalizedRules;
  spentToday?: bigint;
  screen?: (q: { payTo: string; domain: string }) => { sanctions: object; domain: object };
  resourceUrl?: string;
}): { decision: DecisionKind; reasons: string[]; chosen: number; amountMicros: bigint };

export function parseUSD(value: number | string): bigint;
export function formatUSD(micros: bigint): string;
