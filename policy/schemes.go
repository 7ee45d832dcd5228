package policy

import "regexp"

// The payment schemes of the official SDKs (@x402/evm 2.27), as docs/SPEC.md §4.6 treats them. An option
// is judged by what its agent authorizes: for `exact` the amount, for `upto` the amount as a maximum (the
// seller settles its usage, at most that). `batch-settlement` and `auth-capture` are refused: the money
// they move is settled or captured after the request, outside any response payguard reads, so what is
// spent could never be reconciled with what was reserved.
const (
	schemeExact           = "exact"
	schemeUpto            = "upto"
	schemeBatchSettlement = "batch-settlement"
	schemeAuthCapture     = "auth-capture"
)

// readableScheme is a scheme name a reason may quote: a seller's text, printed only when it looks like
// one (the SDKs' names are lower-case words with dashes).
var readableScheme = regexp.MustCompile(`^[a-z0-9][a-z0-9_.-]{0,39}$`)

// schemeSupported reports whether payguard guards the option's scheme as offered: `exact` on any network
// the other rules allow, `upto` only as an x402 v2 option on an EVM network (the scheme is defined there
// only, as a Permit2 authorization whose maximum, recipient and window the proxy can read).
func schemeSupported(o Option) bool {
	switch {
	case o.Cart, o.Scheme == schemeExact:
		return true
	case o.Scheme == schemeUpto:
		return !o.V1 && o.EVM
	}
	return false
}

// amountWord names what an option's amount is in a reason: the amount itself, or for `upto` the maximum
// the agent authorizes (what is judged and reserved; the seller settles at most that).
func amountWord(o Option) string {
	if !o.Cart && o.Scheme == schemeUpto {
		return "upto maximum"
	}
	return "amount"
}

func reasonSchemeUnsupported(o Option) Reason {
	switch o.Scheme {
	case schemeUpto:
		return reason(Block, CodeSchemeUnsupported, "payment scheme upto is supported only in x402 v2 on an EVM network")
	case schemeBatchSettlement:
		return reason(Block, CodeSchemeUnsupported, "payment scheme batch-settlement is not supported: the seller redeems vouchers against a deposit after the request, so payguard cannot reconcile what is spent")
	case schemeAuthCapture:
		return reason(Block, CodeSchemeUnsupported, "payment scheme auth-capture is not supported: an operator captures, voids or refunds the escrowed authorization after the request, so payguard cannot reconcile what is spent")
	}
	name := "(unreadable)"
	if readableScheme.MatchString(o.Scheme) {
		name = o.Scheme
	}
	return reason(Block, CodeSchemeUnsupported, "payment scheme %s is not supported", name)
}
