package policy

import "fmt"

// This file is the one place where reason texts are written. Each function returns one row of SPEC §5's
// "Preflight reason strings" table (or one of payguard's additions, marked below). Amounts print with
// USD.String(): as few decimals as needed, no thousands separator, e.g. "$1.5", "$1", "$0.000001".
//
// Two table rows carry a parenthetical that lists the cases the row covers rather than literal text:
// "unsupported or malformed payment option (unsupported scheme, oversized amount, malformed EVM
// destination)" and "invalid payment amount (negative or nonfinite)". payguard writes the text before the
// parenthesis, so one option with several such defects yields one stable string.

// Decision is a preflight decision: allow, hold or block.
type Decision string

// The decisions, weakest first.
const (
	Allow Decision = "allow"
	Hold  Decision = "hold"
	Block Decision = "block"
)

// rank orders decisions by strength. Anything unknown ranks as block, so a future or mistyped decision is
// never taken for allow (SPEC §4.5 precedence rule 4).
func (d Decision) rank() int {
	switch d {
	case Allow:
		return 0
	case Hold:
		return 1
	default:
		return 2
	}
}

// Stronger reports whether d outranks o.
func (d Decision) Stronger(o Decision) bool { return d.rank() > o.rank() }

// Reason is one reason for a decision. Its String form, "decision: text", is what results carry (SPEC §5's
// text); Code is its stable machine name (docs/SPEC.md §5 lists them), which a channel branches on instead of
// matching the text.
type Reason struct {
	Decision Decision
	Code     string
	Text     string
}

func (r Reason) String() string {
	if r == allPassed {
		return allPassedString // a plain allow's one reason, written once
	}
	return string(r.Decision) + ": " + r.Text
}

// allPassed is reasonAllPassed() and allPassedString its String.
var allPassed, allPassedString = reasonAllPassed(), string(Allow) + ": " + reasonAllPassed().Text

// reason is a reason whose text is format with args; a text without arguments is format itself (no reason
// text has a verb or a '%' without them: TestFixedReasonTexts).
func reason(d Decision, code, format string, args ...any) Reason {
	if len(args) == 0 {
		return Reason{Decision: d, Code: code, Text: format}
	}
	return Reason{Decision: d, Code: code, Text: fmt.Sprintf(format, args...)}
}

// Reason codes: one per row of SPEC §5's reason table and per payguard addition, stable across releases
// (a row's text may carry details; its code never does).
const (
	CodeNoOptions                        = "no_options"
	CodeMerchantDomainUnknown            = "merchant_domain_unknown"
	CodeDomainBlocklisted                = "domain_blocklisted"
	CodeDomainNotAllowlisted             = "domain_not_allowlisted"
	CodeNameSanctionedExact              = "name_sanctioned_exact"
	CodeNameSanctionedPossible           = "name_sanctioned_possible"
	CodeNewDomain                        = "new_domain"
	CodeDomainNoDNS                      = "domain_no_dns"
	CodeMalformedOption                  = "malformed_option"
	CodeInvalidAmount                    = "invalid_amount"
	CodeNetworkNotAllowed                = "network_not_allowed"
	CodeAssetNotUSDC                     = "asset_not_usdc"
	CodeUnpriced                         = "unpriced"
	CodeAboveMaxPerPayment               = "above_max_per_payment"
	CodeAboveHoldThreshold               = "above_hold_threshold"
	CodeDailyCap                         = "daily_cap"
	CodePayToBlocklisted                 = "payto_blocklisted"
	CodePayToNotAllowlisted              = "payto_not_allowlisted"
	CodePayToSanctioned                  = "payto_sanctioned"
	CodeNoPayTo                          = "no_payto"
	CodeAllRulesPassed                   = "all_rules_passed"
	CodeSanctionsUnavailable             = "sanctions_unavailable"
	CodeSanctionsFailed                  = "sanctions_failed"
	CodeDomainCheckFailed                = "domain_check_failed"
	CodeInternalError                    = "internal_error"
	CodeInvalidIndexRule                 = "invalid_index_rule"
	CodeEndpointPriceAboveCategoryMedian = "endpoint_price_above_category_median"
	CodeEndpointFailedLast3              = "endpoint_failed_last_3"
	CodeEndpointPayToChanged             = "endpoint_payto_changed"
	CodeSchemeUnsupported                = "scheme_unsupported"
	CodeSettlementAlarm                  = "seller_settlement_alarm"
	CodeUnpaidTickets                    = "unpaid_tickets_per_site"
)

// ReasonCodes lists every code, for channels that map them (a test there checks each is mapped).
var ReasonCodes = []string{CodeNoOptions, CodeMerchantDomainUnknown, CodeDomainBlocklisted, CodeDomainNotAllowlisted, CodeNameSanctionedExact, CodeNameSanctionedPossible, CodeNewDomain, CodeDomainNoDNS, CodeMalformedOption, CodeInvalidAmount, CodeNetworkNotAllowed, CodeAssetNotUSDC, CodeUnpriced, CodeAboveMaxPerPayment, CodeAboveHoldThreshold, CodeDailyCap, CodePayToBlocklisted, CodePayToNotAllowlisted, CodePayToSanctioned, CodeNoPayTo, CodeAllRulesPassed, CodeSanctionsUnavailable, CodeSanctionsFailed, CodeDomainCheckFailed, CodeInternalError, CodeInvalidIndexRule, CodeEndpointPriceAboveCategoryMedian, CodeEndpointFailedLast3, CodeEndpointPayToChanged, CodeSchemeUnsupported, CodeSettlementAlarm, CodeUnpaidTickets}

// SPEC §5's reason table.

func reasonNoOptions() Reason {
	return reason(Block, CodeNoOptions, "no payment options found in input")
}
func reasonNoMerchantDomain() Reason {
	return reason(Hold, CodeMerchantDomainUnknown, "could not determine merchant domain")
}
func reasonDomainBlocked(domain string) Reason {
	return reason(Block, CodeDomainBlocklisted, "domain %s is on blocklist", domain)
}
func reasonDomainNotAllowlisted(domain string) Reason {
	return reason(Hold, CodeDomainNotAllowlisted, "domain %s not on allowlist", domain)
}
func reasonNameExact() Reason {
	return reason(Block, CodeNameSanctionedExact, "merchant name exactly matches an OFAC SDN entry")
}
func reasonNamePossible() Reason {
	return reason(Hold, CodeNameSanctionedPossible, "merchant name possibly matches an OFAC SDN entry")
}
func reasonNewDomain(days, threshold int) Reason {
	return reason(Hold, CodeNewDomain, "domain registered %d days ago (< %d)", days, threshold)
}
func reasonNoARecord() Reason { return reason(Hold, CodeDomainNoDNS, "domain has no DNS A record") }
func reasonMalformedOption() Reason {
	return reason(Block, CodeMalformedOption, "unsupported or malformed payment option")
}
func reasonInvalidAmount() Reason { return reason(Block, CodeInvalidAmount, "invalid payment amount") }
func reasonNetworkNotAllowed(network string) Reason {
	return reason(Block, CodeNetworkNotAllowed, "network %s not allowed", network)
}
func reasonAssetNotUSDC(asset string) Reason {
	return reason(Block, CodeAssetNotUSDC, "asset %s is not a known USDC contract", asset)
}
func reasonUnpriced() Reason { return reason(Hold, CodeUnpriced, "amount could not be priced in USD") }
func reasonAboveMax(what string, amount, maximum USD) Reason {
	return reason(Block, CodeAboveMaxPerPayment, "%s $%s exceeds max $%s", what, amount, maximum)
}
func reasonAboveHold(what string, amount, threshold USD) Reason {
	return reason(Hold, CodeAboveHoldThreshold, "%s $%s above hold threshold $%s", what, amount, threshold)
}

// DailyCapReason is the daily-cap reason, for the proxy's ledger refusing a reservation the engine allowed
// (another process spent in between): the same row, never a copy of its text.
func DailyCapReason(limit, spent USD) Reason { return reasonDailyCap(limit, spent) }

// OverDailyCap is the daily-cap comparison every caller makes: amount does not fit in what is left of
// limit after spent. Compared as limit-spent < amount rather than spent+amount > limit: a spend figure handed
// in by code (not parsed, so not bounded by ParseUSD) cannot overflow the comparison into an allow.
func OverDailyCap(amount, spent, limit USD) bool { return amount > limit-spent }

func reasonDailyCap(limit, spent USD) Reason {
	return reason(Block, CodeDailyCap, "daily cap $%s would be exceeded (spent $%s)", limit, spent)
}
func reasonPayToBlocked(payTo string) Reason {
	return reason(Block, CodePayToBlocklisted, "payTo %s is on blocklist", payTo)
}
func reasonPayToNotAllowlisted(payTo string) Reason {
	return reason(Hold, CodePayToNotAllowlisted, "payTo %s not on allowlist", payTo)
}
func reasonPayToSanctioned(payTo string) Reason {
	return reason(Block, CodePayToSanctioned, "payTo %s is an OFAC SDN-listed address", payTo)
}
func reasonNoPayTo() Reason   { return reason(Hold, CodeNoPayTo, "payment option has no payTo") }
func reasonAllPassed() Reason { return reason(Allow, CodeAllRulesPassed, "all rules passed") }

// payguard's additions: facts that could not be gathered. SPEC §5's reasons are not a closed enumeration, and a
// failure inside the engine must become a hold that says what failed, never an allow.

func reasonSanctionsUnavailable() Reason {
	return reason(Hold, CodeSanctionsUnavailable, "sanctions data unavailable")
}
func reasonSanctionsFailed() Reason {
	return reason(Hold, CodeSanctionsFailed, "sanctions screening failed")
}
func reasonDomainCheckFailed() Reason {
	return reason(Hold, CodeDomainCheckFailed, "domain screening failed")
}
func reasonInternalError(what string) Reason {
	return reason(Hold, CodeInternalError, "internal error: %s", what)
}

// SettlementAlarmReason is the proxy's hold on a seller whose settlement broke its authorization (an upto
// settlement above the authorized maximum, on another network, for another payer or recipient): that
// seller's next payments wait for a person until the alarm is cleared or expires (docs/proxy.md).
func SettlementAlarmReason(host, what string) Reason {
	return reason(Hold, CodeSettlementAlarm, "seller %s reported a settlement outside its authorization (%s); its payments wait for a person", host, what)
}

// UnpaidTicketsReason is the proxy's block of an allowed 402 when the seller site already has n tickets of
// allowed 402s outstanding, unpaid (the bound, proxy.max_unpaid_per_site): the store keeps each until it
// expires, so a seller or an agent loop that never pays cannot fill the disk.
func UnpaidTicketsReason(site string, n int) Reason {
	return reason(Block, CodeUnpaidTickets, "site %s has %d allowed payments outstanding, unpaid; pay or wait for them to expire", site, n)
}

// InternalErrorReason is the reason the engine gives when evaluation itself failed (for example a recovered
// panic); it is a hold, never an allow.
func InternalErrorReason(what string) Reason { return reasonInternalError(what) }

// SPEC's Index reasons: a fixed prefix followed by its detail.

func reasonInvalidIndexRule(detail string) Reason {
	return reason(Hold, CodeInvalidIndexRule, "invalid_index_rule: %s", detail)
}
func reasonPriceAboveMedian(detail string) Reason {
	return reason(Hold, CodeEndpointPriceAboveCategoryMedian, "endpoint_price_above_category_median: %s", detail)
}
func reasonEndpointFailed(n int, lastErr string) Reason {
	if lastErr == "" {
		return reason(Hold, CodeEndpointFailedLast3, "endpoint_failed_last_3: the last %d unpaid probes failed", n)
	}
	return reason(Hold, CodeEndpointFailedLast3, "endpoint_failed_last_3: the last %d unpaid probes failed (latest: %s)", n, lastErr)
}
func reasonPayToChanged(detail string) Reason {
	return reason(Hold, CodeEndpointPayToChanged, "endpoint_payto_changed: %s", detail)
}
