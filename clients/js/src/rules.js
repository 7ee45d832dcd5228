// The rule set in the JavaScript API's camelCase names (SPEC: HTTP and MCP use snake_case, the JavaScript
// SDK camelCase), read over the defaults with the Go decoder's strictness: an unknown name, a wrong type, a
// list over 100 entries or a negative threshold is an error that names the rule, never a silent default.

import { formatUSD, parseUSD } from './usd.js';

/** camelCase rule name → SPEC's snake_case name, in SPEC's order. */
export const RULE_NAMES = {
  maxPerPaymentUsd: 'max_per_payment_usd', holdAboveUsd: 'hold_above_usd', dailyCapUsd: 'daily_cap_usd',
  allowedNetworks: 'allowed_networks', usdcOnly: 'usdc_only', strictAllowlist: 'strict_allowlist',
  newDomainDays: 'new_domain_days', screenSanctions: 'screen_sanctions', maxPriceMultiple: 'max_price_multiple',
  requireLive: 'require_live', holdOnPayToChange: 'hold_on_payto_change', domainAllowlist: 'domain_allowlist',
  domainBlocklist: 'domain_blocklist', paytoAllowlist: 'payto_allowlist', paytoBlocklist: 'payto_blocklist',
};
const MONEY = ['maxPerPaymentUsd', 'holdAboveUsd', 'dailyCapUsd'];
const FLAGS = ['usdcOnly', 'strictAllowlist', 'screenSanctions', 'requireLive', 'holdOnPayToChange'];
const LISTS = ['allowedNetworks', 'domainAllowlist', 'domainBlocklist', 'paytoAllowlist', 'paytoBlocklist'];
/** SPEC's cap on entries per rule list. */
export const MAX_LIST_ENTRIES = 100;

/** defaultRules are SPEC's defaults (money in micro-dollars). */
export function defaultRules() {
  return {
    maxPerPaymentUsd: 1_000_000n, holdAboveUsd: 250_000n, dailyCapUsd: 25_000_000n,
    allowedNetworks: ['eip155:8453', 'base'], usdcOnly: true, strictAllowlist: false, newDomainDays: 30,
    screenSanctions: true, maxPriceMultiple: 5, requireLive: true, holdOnPayToChange: true,
    domainAllowlist: [], domainBlocklist: [], paytoAllowlist: [], paytoBlocklist: [],
  };
}

/** camelCase turns a snake_case rule name into the API's ("payto_allowlist" → "paytoAllowlist"). */
export function camelRuleName(snake) {
  const hit = Object.entries(RULE_NAMES).find(([, s]) => s === snake);
  return hit ? hit[0] : undefined;
}

/**
 * normalizeRules reads a camelCase rules object over the defaults. Money takes numbers or decimal strings
 * of dollars; they are kept as BigInt micro-dollars.
 * @param {object} [given]
 */
export function normalizeRules(given = {}) {
  if (given === null || typeof given !== 'object' || Array.isArray(given)) throw new TypeError('rules: not an object of rule names');
  const r = defaultRules();
  for (const [name, value] of Object.entries(given)) {
    const err = (why) => new TypeError(`rules: ${name}: ${why}`);
    if (!Object.prototype.hasOwnProperty.call(RULE_NAMES, name)) {
      const hint = camelRuleName(name) ? ` (use ${camelRuleName(name)})` : '';
      throw new TypeError(`rules: unknown rule "${name}"${hint}`);
    }
    if (value === undefined) continue;
    if (value === null) {
      if (name === 'maxPriceMultiple') { r.maxPriceMultiple = null; continue; }
      throw err('must not be null');
    }
    if (MONEY.includes(name)) {
      if (typeof value !== 'number' && typeof value !== 'string') throw err('not a number of dollars');
      try { r[name] = parseUSD(value); } catch (e) { throw err(e.message); }
    } else if (FLAGS.includes(name)) {
      if (typeof value !== 'boolean') throw err('not a boolean');
      r[name] = value;
    } else if (LISTS.includes(name)) {
      if (!Array.isArray(value) || value.some((v) => typeof v !== 'string')) throw err('not a list of strings');
      if (value.length > MAX_LIST_ENTRIES) throw err(`has ${value.length} entries (at most ${MAX_LIST_ENTRIES})`);
      r[name] = [...value];
    } else if (name === 'newDomainDays') {
      if (!Number.isInteger(value) || value < 0) throw err('must be a non-negative integer');
      r.newDomainDays = value;
    } else if (name === 'maxPriceMultiple') {
      if (typeof value !== 'number' || !(value > 0)) throw err('must be positive or null');
      r.maxPriceMultiple = value;
    }
  }
  return r;
}

/** snakeRules writes rules as the HTTP API takes them (remote screening, the sidecar). */
export function snakeRules(r) {
  const out = {};
  for (const [camel, snake] of Object.entries(RULE_NAMES)) {
    const v = r[camel];
    out[snake] = typeof v === 'bigint' ? usdNumber(v) : v;
  }
  return out;
}

// A JSON number of dollars. Amounts have at most six decimals and fewer than 16 significant digits, so the
// number's shortest text (what JSON.stringify writes) is the decimal itself, which the Go side parses exactly.
const usdNumber = (micros) => Number(formatUSD(micros));
