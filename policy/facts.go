package policy

// Facts is everything Evaluate decides on. The caller (the preflight engine) gathers it: it parses the
// payment options with the x402 package, asks screening for sanctions and domain facts, and reads the
// caller's spend. Evaluate itself does no I/O and reads no clock.
type Facts struct {
	// Options are the payment options in input order: a challenge's accepts, or the one option of a cart.
	Options []Option
	// MerchantDomain is the merchant's host, normalized by MerchantDomain(); "" when it could not be
	// determined.
	MerchantDomain string
	// MerchantName is the merchant's name as given (cart input); "" when none.
	MerchantName string
	// SpentToday is the caller's own figure for today's spend (context.spent_today_usd).
	SpentToday USD
	// Sanctions are the sanctions facts for the chosen option's payee and the merchant name. The engine
	// gathers them after calling Choose.
	Sanctions SanctionsFacts
	// Domain are the merchant domain's registration and DNS facts.
	Domain DomainFacts
	// Index is the Endpoint Index's evidence about the endpoint being paid (see index.go).
	Index IndexFacts
	// Rules are the effective rules (the deployment's, overlaid by the request's).
	Rules Rules
	// Lists, when set, are Rules' lists prepared once (Rules.Lists); lists made from other rules are not
	// used (each list is then compared entry by entry).
	Lists *Lists
}

// AmountProblem says why an option's amount could not be read.
type AmountProblem int

const (
	AmountOK        AmountProblem = iota
	AmountMalformed               // not a decimal integer of atomic units (or, for a cart, not a USD number), or missing
	AmountOversized               // larger than the largest accepted amount
	AmountNegative                // negative or nonfinite
)

// Option is one payment option, with the facts the caller derived from its wire form.
type Option struct {
	// Cart marks the single option of a cart input: it has no scheme, network or asset, and USD is the
	// cart's total_usd.
	Cart bool

	Scheme  string // as on the wire
	Network string // as on the wire (v1 name or CAIP-2)
	Asset   string // as on the wire
	PayTo   string // as on the wire

	// NetworkIDs are every name of the option's network (the wire name, its CAIP-2 id, its v1 name);
	// the network is allowed when any of them is in allowed_networks.
	NetworkIDs []string
	// Amount is AmountOK when the amount was read.
	Amount AmountProblem
	// KnownUSDC is true when the asset is a recognized USDC contract on the option's network.
	KnownUSDC bool
	// USD is the amount in micro-dollars. It is meaningful for a cart, and for a known USDC asset
	// (6 decimals: one atomic unit is one micro-dollar).
	USD USD
	// PayToMalformed is true when payTo cannot be an address of the option's chain: on EVM not a 0x-prefixed
	// 20-byte hex address, on Solana not the Base58 text of a 32-byte key.
	PayToMalformed bool
	// V1 is true for an option of an x402 v1 challenge; EVM for an option on an EVM network (eip155 or a v1
	// EVM name). `upto` is guarded only as v2 on EVM (schemes.go).
	V1, EVM bool
}

// Priced reports whether the option's amount is known in USD.
func (o Option) Priced() bool { return o.Amount == AmountOK && (o.Cart || o.KnownUSDC) }

// SanctionsState says whether sanctions facts were gathered.
type SanctionsState int

const (
	// SanctionsNotGathered is the zero value: nobody looked. With screen_sanctions it holds, like NoData.
	SanctionsNotGathered SanctionsState = iota
	// SanctionsScreened: a loaded list was consulted; the match fields are meaningful.
	SanctionsScreened
	// SanctionsNoData: no sanctions list is loaded.
	SanctionsNoData
	// SanctionsFailed: the screener failed (an error or a recovered panic).
	SanctionsFailed
	// SanctionsNothingToScreen: no payee was chosen and no merchant name was given.
	SanctionsNothingToScreen
)

// SanctionsFacts are the sanctions facts for the chosen payee address and the merchant name.
type SanctionsFacts struct {
	State        SanctionsState
	AddressMatch bool // the chosen payTo is an SDN-listed address
	NameExact    bool // the merchant name exactly matches an SDN name or alias
	NamePossible bool // the merchant name possibly matches
}

// DomainFacts are what is known about the merchant domain. Nil pointers are unknown; unknown is reported by
// the engine and never treated as evidence either way.
type DomainFacts struct {
	AgeDays *int  // registration age in whole days; nil = unknown
	HasA    *bool // an A record was observed; nil = unknown
	Failed  bool  // the domain checker failed (error or recovered panic)
}

// Outcome is Evaluate's answer.
type Outcome struct {
	Decision Decision
	// Reasons are every reason that fired, strongest decision first, in evaluation order within a decision.
	Reasons []Reason
	// Chosen is the index of the chosen option in Facts.Options: the cheapest acceptable one, else the held
	// option a person may approve (Payee); -1 when there is neither.
	Chosen int
	// OptionsEvaluated counts the options looked at.
	OptionsEvaluated int
	// AmountUSD is the chosen (or held) option's amount (0 when none was chosen or it cannot be priced).
	AmountUSD USD
}

// ReasonTexts is ReasonStrings and ReasonCodes in one allocation (a result carries both).
func (o Outcome) ReasonTexts() (texts, codes []string) {
	n := len(o.Reasons)
	s := make([]string, 2*n)
	texts, codes = s[:n:n], s[n:]
	for i, r := range o.Reasons {
		texts[i], codes[i] = r.String(), r.Code
	}
	return texts, codes
}

// ReasonCodes are the reasons' stable codes, in the order of ReasonStrings.
func (o Outcome) ReasonCodes() []string {
	s := make([]string, len(o.Reasons))
	for i, r := range o.Reasons {
		s[i] = r.Code
	}
	return s
}

// ReasonStrings renders the reasons as SPEC §5's "decision: text" strings.
func (o Outcome) ReasonStrings() []string {
	s := make([]string, len(o.Reasons))
	for i, r := range o.Reasons {
		s[i] = r.String()
	}
	return s
}
