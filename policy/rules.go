package policy

// Rules is SPEC §3's rule set. JSON and YAML use SPEC §3's snake_case names. Decoding over DefaultRules() leaves
// omitted rules at their defaults; an unknown rule name is an error that names it (see DecodeRulesJSON /
// the YAML decoder with KnownFields). List entries are capped at MaxListEntries.
type Rules struct {
	// MaxPerPaymentUSD: block when the selected amount exceeds this USD cap.
	MaxPerPaymentUSD USD `json:"max_per_payment_usd" yaml:"max_per_payment_usd"`
	// HoldAboveUSD: hold above this USD amount when the maximum has not already blocked it.
	HoldAboveUSD USD `json:"hold_above_usd" yaml:"hold_above_usd"`
	// DailyCapUSD: block when today's spend (UTC day) plus the quote exceeds this many USD.
	DailyCapUSD USD `json:"daily_cap_usd" yaml:"daily_cap_usd"`
	// AllowedNetworks are the allowed network identifiers (CAIP-2 such as eip155:8453, or x402 v1 names such as base).
	AllowedNetworks []string `json:"allowed_networks" yaml:"allowed_networks"`
	// USDCOnly requires a recognized USDC contract on the network; other tokens are not assumed to equal USD.
	USDCOnly bool `json:"usdc_only" yaml:"usdc_only"`
	// StrictAllowlist holds a merchant domain outside domain_allowlist; a non-empty payto_allowlist also requires that payee.
	StrictAllowlist bool `json:"strict_allowlist" yaml:"strict_allowlist"`
	// NewDomainDays holds a known registration age below this many days unless the domain is allowlisted; an unknown age is reported, not invented.
	NewDomainDays int `json:"new_domain_days" yaml:"new_domain_days"`
	// ScreenSanctions screens public sanctions-list wallet and name matches; disabling removes that protection.
	ScreenSanctions bool `json:"screen_sanctions" yaml:"screen_sanctions"`
	// MaxPriceMultiple holds above this multiple of the public category median; null disables.
	MaxPriceMultiple *float64 `json:"max_price_multiple" yaml:"max_price_multiple"` // nil (JSON null) disables
	// RequireLive holds after three usable failed unpaid probes; missing observations are unknown.
	RequireLive bool `json:"require_live" yaml:"require_live"`
	// HoldOnPayToChange holds for seven-day observed payee changes or a quote differing from the latest observation.
	HoldOnPayToChange bool `json:"hold_on_payto_change" yaml:"hold_on_payto_change"`
	// DomainAllowlist: a domain plus its subdomains, no wildcard syntax; policy, not proof of ownership.
	DomainAllowlist []string `json:"domain_allowlist" yaml:"domain_allowlist"`
	// DomainBlocklist blocks the listed domains and their subdomains.
	DomainBlocklist []string `json:"domain_blocklist" yaml:"domain_blocklist"`
	// PayToAllowlist are wallet identifiers; EVM addresses ignore letter case, non-EVM identifiers preserve case.
	PayToAllowlist []string `json:"payto_allowlist" yaml:"payto_allowlist"`
	// PayToBlocklist blocks the listed payees; block takes precedence over approval.
	PayToBlocklist []string `json:"payto_blocklist" yaml:"payto_blocklist"`
}

// MaxListEntries is SPEC §10's cap on entries per rule list.
const MaxListEntries = 100

// DefaultRules returns SPEC §3's defaults.
func DefaultRules() Rules {
	multiple := 5.0
	return Rules{
		MaxPerPaymentUSD:  1 * MicrosPerUSD,
		HoldAboveUSD:      250_000,
		DailyCapUSD:       25 * MicrosPerUSD,
		AllowedNetworks:   []string{"eip155:8453", "base"},
		USDCOnly:          true,
		NewDomainDays:     30,
		ScreenSanctions:   true,
		MaxPriceMultiple:  &multiple,
		RequireLive:       true,
		HoldOnPayToChange: true,
		DomainAllowlist:   []string{},
		DomainBlocklist:   []string{},
		PayToAllowlist:    []string{},
		PayToBlocklist:    []string{},
	}
}
