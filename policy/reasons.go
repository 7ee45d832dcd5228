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

// Reason is one reason for a decision. Its String form, "decision: text", is what results carry.
type Reason struct {
	Decision Decision
	Text     string
}

func (r Reason) String() string { return string(r.Decision) + ": " + r.Text }

func reason(d Decision, format string, args ...any) Reason {
	return Reason{Decision: d, Text: fmt.Sprintf(format, args...)}
}

// SPEC §5's reason table.

func reasonNoOptions() Reason { return reason(Block, "no payment options found in input") }
func reasonNoMerchantDomain() Reason {
	return reason(Hold, "could not determine merchant domain")
}
func reasonDomainBlocked(domain string) Reason {
	return reason(Block, "domain %s is on blocklist", domain)
}
func reasonDomainNotAllowlisted(domain string) Reason {
	return reason(Hold, "domain %s not on allowlist", domain)
}
func reasonNameExact() Reason {
	return reason(Block, "merchant name exactly matches an OFAC SDN entry")
}
func reasonNamePossible() Reason {
	return reason(Hold, "merchant name possibly matches an OFAC SDN entry")
}
func reasonNewDomain(days, threshold int) Reason {
	return reason(Hold, "domain registered %d days ago (< %d)", days, threshold)
}
func reasonNoARecord() Reason { return reason(Hold, "domain has no DNS A record") }
func reasonMalformedOption() Reason {
	return reason(Block, "unsupported or malformed payment option")
}
func reasonInvalidAmount() Reason { return reason(Block, "invalid payment amount") }
func reasonNetworkNotAllowed(network string) Reason {
	return reason(Block, "network %s not allowed", network)
}
func reasonAssetNotUSDC(asset string) Reason {
	return reason(Block, "asset %s is not a known USDC contract", asset)
}
func reasonUnpriced() Reason { return reason(Hold, "amount could not be priced in USD") }
func reasonAboveMax(amount, maximum USD) Reason {
	return reason(Block, "amount $%s exceeds max $%s", amount, maximum)
}
func reasonAboveHold(amount, threshold USD) Reason {
	return reason(Hold, "amount $%s above hold threshold $%s", amount, threshold)
}
func reasonDailyCap(limit, spent USD) Reason {
	return reason(Block, "daily cap $%s would be exceeded (spent $%s)", limit, spent)
}
func reasonPayToBlocked(payTo string) Reason {
	return reason(Block, "payTo %s is on blocklist", payTo)
}
func reasonPayToNotAllowlisted(payTo string) Reason {
	return reason(Hold, "payTo %s not on allowlist", payTo)
}
func reasonPayToSanctioned(payTo string) Reason {
	return reason(Block, "payTo %s is an OFAC SDN-listed address", payTo)
}
func reasonNoPayTo() Reason   { return reason(Hold, "payment option has no payTo") }
func reasonAllPassed() Reason { return reason(Allow, "all rules passed") }

// payguard's additions: facts that could not be gathered. SPEC §5's reasons are not a closed enumeration, and a
// failure inside the engine must become a hold that says what failed, never an allow.

func reasonSanctionsUnavailable() Reason { return reason(Hold, "sanctions data unavailable") }
func reasonSanctionsFailed() Reason      { return reason(Hold, "sanctions screening failed") }
func reasonDomainCheckFailed() Reason    { return reason(Hold, "domain screening failed") }
func reasonInternalError(what string) Reason {
	return reason(Hold, "internal error: %s", what)
}

// InternalErrorReason is the reason the engine gives when evaluation itself failed (for example a recovered
// panic); it is a hold, never an allow.
func InternalErrorReason(what string) Reason { return reasonInternalError(what) }
