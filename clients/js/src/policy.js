// The decision, ported line for line from the Go engine (policy/evaluate.go, policy/match.go,
// policy/reasons.go, preflight/options.go). It is pure: facts in, decision and reasons out. The decision
// vectors exported by the Go tests (testdata/vectors/decisions.json) hold it to the Go engine's answers.

import { isIPv4, isIPv6 as isIPv6Text } from 'node:net';
import { domainToASCII } from 'node:url';
import { formatUSD } from './usd.js';
import { caip2, isEVMAddress, isEVMNetwork, isKnownUSDC, isSolanaAddress, isSolanaNetwork, parseAtomic, v1Name } from './x402.js';

/** SPEC's cap on payment options per request. */
export const MAX_OPTIONS = 32;
const RANK = { allow: 0, hold: 1, block: 2 };
const rank = (d) => RANK[d] ?? 2; // anything unknown ranks as block: never taken for allow
const stronger = (a, b) => rank(a) > rank(b);
const reason = (decision, text) => ({ decision, text });
const str = (r) => `${r.decision}: ${r.text}`;

// SPEC's reason table, as policy/reasons.go writes it.
const R = {
  noOptions: () => reason('block', 'no payment options found in input'),
  noMerchantDomain: () => reason('hold', 'could not determine merchant domain'),
  domainBlocked: (d) => reason('block', `domain ${d} is on blocklist`),
  domainNotAllowlisted: (d) => reason('hold', `domain ${d} not on allowlist`),
  nameExact: () => reason('block', 'merchant name exactly matches an OFAC SDN entry'),
  namePossible: () => reason('hold', 'merchant name possibly matches an OFAC SDN entry'),
  newDomain: (days, min) => reason('hold', `domain registered ${days} days ago (< ${min})`),
  noARecord: () => reason('hold', 'domain has no DNS A record'),
  malformedOption: () => reason('block', 'unsupported or malformed payment option'),
  invalidAmount: () => reason('block', 'invalid payment amount'),
  networkNotAllowed: (n) => reason('block', `network ${n} not allowed`),
  assetNotUSDC: (a) => reason('block', `asset ${a} is not a known USDC contract`),
  unpriced: () => reason('hold', 'amount could not be priced in USD'),
  aboveMax: (w, a, m) => reason('block', `${w} $${formatUSD(a)} exceeds max $${formatUSD(m)}`),
  aboveHold: (w, a, t) => reason('hold', `${w} $${formatUSD(a)} above hold threshold $${formatUSD(t)}`),
  schemeUnsupported: (o) => reason('block', schemeUnsupportedText(o.scheme)),
  dailyCap: (cap, spent) => reason('block', `daily cap $${formatUSD(cap)} would be exceeded (spent $${formatUSD(spent)})`),
  payToBlocked: (p) => reason('block', `payTo ${p} is on blocklist`),
  payToNotAllowlisted: (p) => reason('hold', `payTo ${p} not on allowlist`),
  payToSanctioned: (p) => reason('block', `payTo ${p} is an OFAC SDN-listed address`),
  noPayTo: () => reason('hold', 'payment option has no payTo'),
  allPassed: () => reason('allow', 'all rules passed'),
  sanctionsUnavailable: () => reason('hold', 'sanctions data unavailable'),
  sanctionsFailed: () => reason('hold', 'sanctions screening failed'),
  domainCheckFailed: () => reason('hold', 'domain screening failed'),
};

/**
 * optionFacts derives the policy facts of one x402 payment option (preflight/options.go policyOption).
 * @param {object} req a PaymentRequirements object (v2 `amount`, v1 `maxAmountRequired`)
 * @param {number} version the challenge's x402Version
 */
export function optionFacts(req, version) {
  const text = (v) => (typeof v === 'string' ? v : '');
  const o = {
    scheme: text(req.scheme), network: text(req.network), asset: text(req.asset), payTo: text(req.payTo),
    amount: 'ok', usd: 0n, knownUSDC: false, networkIds: [],
  };
  const amountText = text(version === 1 ? req.maxAmountRequired : req.amount);
  o.networkIds.push(o.network);
  const id = caip2(o.network);
  if (id) {
    if (id !== o.network) o.networkIds.push(id);
    const name = v1Name(id);
    if (name && name !== o.network) o.networkIds.push(name);
  }
  const atomic = parseAtomic(amountText);
  if (!atomic.ok) {
    o.amount = atomic.problem === 'malformed' && /^(nan|inf|infinity)$/.test(amountText.replace(/^\++/, '').toLowerCase())
      ? 'negative' : atomic.problem;
  }
  if (isKnownUSDC(o.network, o.asset)) {
    o.knownUSDC = true;
    if (atomic.ok) o.usd = atomic.value; // six decimals: one atomic unit is one micro-dollar
  }
  o.evm = isEVMNetwork(o.network);
  o.v1 = version === 1;
  // A payee that cannot be the chain's address is malformed, on Solana (32-byte Base58 key) as on EVM.
  o.payToMalformed = o.payTo !== '' && ((o.evm && !isEVMAddress(o.payTo)) ||
    (isSolanaNetwork(o.network) && !isSolanaAddress(o.payTo)));
  return o;
}

const priced = (o) => o.amount === 'ok' && o.knownUSDC;

// canonicalHost: an IP address in its one text (canonicalIP), else mapped for lookup (IDNs as punycode),
// lower case, no trailing dot (policy/match.go).
function canonicalHost(h) {
  h = h.trim();
  const ip = canonicalIP(h);
  if (ip !== null) return ip;
  if (/[^\x00-\x7f]/.test(h)) {
    const a = domainToASCII(h);
    if (a) h = a;
  }
  return h.toLowerCase().replace(/\.$/, '');
}

// canonicalIP is an IP address's text as Go's netip writes it after Unmap and without zone (IPv6 compressed
// in lower case, an IPv4-mapped IPv6 address as the IPv4 address it reaches), so that a seller cannot escape
// a rule on its address by another spelling; null when h (brackets allowed) is no IP address.
function canonicalIP(h) {
  let s = h.replace(/^\[(.*)\]$/, '$1');
  if (isIPv4(s)) return s;
  const zone = s.indexOf('%');
  if (zone >= 0) s = s.slice(0, zone);
  if (!isIPv6Text(s)) return null;
  let c;
  try {
    c = new URL(`http://[${s}]/`).hostname.slice(1, -1); // WHATWG writes IPv6 as RFC 5952 does, as Go does
  } catch {
    return null;
  }
  const m = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(c);
  if (m) {
    const a = parseInt(m[1], 16), b = parseInt(m[2], 16);
    return `${a >> 8}.${a & 255}.${b >> 8}.${b & 255}`;
  }
  return c;
}

/**
 * merchantDomain extracts the merchant host from a URL or a bare host, as policy.MerchantDomain does;
 * "" when no host can be read.
 */
export function merchantDomain(s) {
  s = typeof s === 'string' ? s.trim() : '';
  if (s === '') return '';
  let host = s;
  if (s.includes('://')) {
    try {
      host = new URL(s).hostname;
    } catch {
      return '';
    }
    host = host.replace(/^\[(.*)\]$/, '$1');
  } else {
    host = host.split(/[/?#]/)[0];
    const at = host.lastIndexOf('@');
    if (at >= 0) host = host.slice(at + 1);
    const hp = /^(?:\[([^[\]]*)\]|([^:[\]]*)):([^:[\]]*)$/.exec(host);
    if (hp) {
      if (hp[3] === '') return '';
      host = hp[1] ?? hp[2];
    }
    host = host.replace(/^\[/, '').replace(/\]$/, '');
    if (host.includes(':') && !isIPv6(host)) return '';
  }
  host = canonicalHost(host);
  if (host === '' || /[ \t\r\n/\\@]/.test(host)) return '';
  return host;
}

const isIPv6 = (h) => { try { return new URL(`http://[${h}]/`).hostname !== ''; } catch { return false; } };

function domainListed(domain, list) {
  if (domain === '') return false;
  return list.some((e) => {
    e = canonicalHost(e);
    return e !== '' && (domain === e || domain.endsWith('.' + e));
  });
}

// policy.isEVMAddress accepts "0X" too (payee lists); x402.IsEVMAddress does not (payTo form).
const isEVMish = (s) => /^0[xX][0-9a-fA-F]{40}$/.test(s);
const samePayee = (a, b) => (isEVMish(a) && isEVMish(b) ? a.toLowerCase() === b.toLowerCase() : a === b);
const payeeListed = (payTo, list) => payTo !== '' && list.some((e) => samePayee(payTo, e.trim()));

function networkAllowed(o, allowed) {
  const ids = o.networkIds.length ? o.networkIds : [o.network];
  return ids.some((id) => id !== '' && allowed.some((a) => a.trim().toLowerCase() === id.toLowerCase()));
}

// Schemes (policy/schemes.go): exact anywhere, upto only as an x402 v2 option on an EVM network (its
// amount is the maximum the agent authorizes); batch-settlement and auth-capture are refused, since the
// money moves after the request, where what is spent cannot be reconciled.
const schemeSupported = (o) => o.scheme === 'exact' || (o.scheme === 'upto' && !o.v1 && o.evm);
const amountWord = (o) => (o.scheme === 'upto' ? 'upto maximum' : 'amount');
function schemeUnsupportedText(scheme) {
  switch (scheme) {
    case 'upto': return 'payment scheme upto is supported only in x402 v2 on an EVM network';
    case 'batch-settlement': return 'payment scheme batch-settlement is not supported: the seller redeems vouchers against a deposit after the request, so payguard cannot reconcile what is spent';
    case 'auth-capture': return 'payment scheme auth-capture is not supported: an operator captures, voids or refunds the escrowed authorization after the request, so payguard cannot reconcile what is spent';
    default: return `payment scheme ${/^[a-z0-9][a-z0-9_.-]{0,39}$/.test(scheme) ? scheme : '(unreadable)'} is not supported`;
  }
}

// judgeOption applies the per-option rules; the order here is the order reasons are listed in.
function judgeOption(o, r) {
  const v = { reasons: [], worst: 'allow' };
  const add = (x) => {
    if (v.reasons.some((h) => h.decision === x.decision && h.text === x.text)) return;
    v.reasons.push(x);
    if (stronger(x.decision, v.worst)) v.worst = x.decision;
  };
  if (!schemeSupported(o)) add(R.schemeUnsupported(o));
  if (o.amount === 'malformed' || o.amount === 'oversized') add(R.malformedOption());
  if (o.amount === 'negative') add(R.invalidAmount());
  if (o.payToMalformed) add(R.malformedOption());
  if (o.payTo === '') add(R.noPayTo());
  if (!networkAllowed(o, r.allowedNetworks)) add(R.networkNotAllowed(o.network));
  if (!o.knownUSDC) {
    if (r.usdcOnly) add(R.assetNotUSDC(o.asset));
    else if (o.amount === 'ok') add(R.unpriced());
  }
  if (priced(o) && o.usd > r.maxPerPaymentUsd) add(R.aboveMax(amountWord(o), o.usd, r.maxPerPaymentUsd));
  if (payeeListed(o.payTo, r.paytoBlocklist)) add(R.payToBlocked(o.payTo));
  else if (r.strictAllowlist && r.paytoAllowlist.length > 0 && o.payTo !== '' && !payeeListed(o.payTo, r.paytoAllowlist)) {
    add(R.payToNotAllowlisted(o.payTo));
  }
  return v;
}

// choose picks the cheapest acceptable option (tie: the first), and the best rejected one.
function choose(options, r) {
  const opts = options.slice(0, MAX_OPTIONS);
  let chosen = -1, rejected = -1, best = null;
  opts.forEach((o, i) => {
    const v = judgeOption(o, r);
    if (v.reasons.length === 0) {
      if (chosen < 0 || o.usd < opts[chosen].usd) chosen = i;
      return;
    }
    if (rejected < 0 || betterRejected(o, v, opts[rejected], best)) { rejected = i; best = v; }
  });
  return { chosen, rejected, best };
}

function betterRejected(o, v, bo, bv) {
  if (v.worst !== bv.worst) return stronger(bv.worst, v.worst);
  if (priced(o) !== priced(bo)) return priced(o);
  return priced(o) && o.usd < bo.usd;
}

const payeeOf = ({ chosen, rejected, best }) => (chosen < 0 && rejected >= 0 && best.worst === 'hold' ? rejected : chosen);

/** payeeIndex is the option whose payee is screened: the chosen one, or a held one a person may approve. */
export const payeeIndex = (options, rules) => payeeOf(choose(options, rules));

/**
 * selectIndex is the option the engine decides on: the chosen one, else the best rejected one (held or
 * blocked), so that the refusal names the reasons the engine would give; 0 for no usable option.
 */
export function selectIndex(options, rules) {
  const c = choose(options, rules);
  if (c.chosen >= 0) return c.chosen;
  return c.rejected >= 0 ? c.rejected : 0;
}

/**
 * evaluate decides (policy.Evaluate). facts: {options (optionFacts), merchantDomain, merchantName,
 * spentToday (bigint micros), rules (normalized), sanctions: {state: 'screened'|'unavailable'|'failed'|
 * 'nothing', addressMatch, nameExact, namePossible}, domain: {ageDays?, hasA?, failed?}}.
 * @returns {{decision: string, reasons: string[], chosen: number, amountMicros: bigint}}
 */
export function evaluate(f) {
  const out = { decision: 'allow', reasons: [], chosen: -1, amountMicros: 0n };
  if (f.options.length === 0) return finish(out, [R.noOptions()]);
  const r = f.rules;
  const reasons = [];
  const domain = f.merchantDomain;
  const domainBlocked = domainListed(domain, r.domainBlocklist);
  const domainAllowed = !domainBlocked && domainListed(domain, r.domainAllowlist);
  if (domain === '') reasons.push(R.noMerchantDomain());
  else if (domainBlocked) reasons.push(R.domainBlocked(domain));
  else if (r.strictAllowlist && !domainAllowed) reasons.push(R.domainNotAllowlisted(domain));

  const c = choose(f.options, r);
  const payee = payeeOf(c);
  if (r.screenSanctions) {
    const s = f.sanctions ?? { state: 'unavailable' };
    if (s.state === 'screened') {
      if (s.addressMatch && payee >= 0) reasons.push(R.payToSanctioned(f.options[payee].payTo));
      if (s.nameExact) reasons.push(R.nameExact());
      else if (s.namePossible) reasons.push(R.namePossible());
    } else if (s.state === 'failed') {
      reasons.push(R.sanctionsFailed());
    } else if (s.state !== 'nothing' && (payee >= 0 || f.merchantName)) {
      reasons.push(R.sanctionsUnavailable());
    }
  }
  if (domain !== '') {
    const d = f.domain ?? {};
    if (Number.isInteger(d.ageDays) && d.ageDays < r.newDomainDays && !domainAllowed) reasons.push(R.newDomain(d.ageDays, r.newDomainDays));
    if (d.hasA === false) reasons.push(R.noARecord());
    if (d.failed) reasons.push(R.domainCheckFailed());
  }
  const spent = f.spentToday ?? 0n;
  if (c.chosen < 0) {
    reasons.push(...c.best.reasons);
    if (payee >= 0) {
      // A held option is the one a person approves: the hold carries it and its amount (SPEC §4.2).
      const o = f.options[payee];
      out.chosen = payee;
      if (priced(o)) out.amountMicros = o.usd;
      if (priced(o) && o.usd > r.dailyCapUsd - spent) reasons.push(R.dailyCap(r.dailyCapUsd, spent));
    }
  } else {
    const amount = f.options[c.chosen].usd;
    out.chosen = c.chosen;
    out.amountMicros = amount;
    if (amount > r.holdAboveUsd) reasons.push(R.aboveHold(amountWord(f.options[c.chosen]), amount, r.holdAboveUsd));
    if (amount > r.dailyCapUsd - spent) reasons.push(R.dailyCap(r.dailyCapUsd, spent));
  }
  return finish(out, reasons);
}

// finish orders the reasons strongest decision first (stable), drops repeats and sets the decision.
function finish(out, reasons) {
  if (reasons.length === 0) return { ...out, decision: 'allow', reasons: [str(R.allPassed())] };
  const sorted = reasons.map((x, i) => [x, i]).sort((a, b) => rank(b[0].decision) - rank(a[0].decision) || a[1] - b[1]);
  const uniq = [...new Set(sorted.map(([x]) => str(x)))];
  const top = sorted[0][0].decision;
  return { ...out, decision: top in RANK ? top : 'block', reasons: uniq };
}
