package policy

// Rules is SPEC §3's rule set. JSON and YAML use SPEC §3's snake_case names. Decoding over DefaultRules() leaves
// omitted rules at their defaults; an unknown rule name is an error that names it (see DecodeRulesJSON /
// the YAML decoder with KnownFields). List entries are capped at MaxListEntries.
type Rules struct {
	MaxPerPaymentUSD  USD      `json:"max_per_payment_usd" yaml:"max_per_payment_usd"`
	HoldAboveUSD      USD      `json:"hold_above_usd" yaml:"hold_above_usd"`
	DailyCapUSD       USD      `json:"daily_cap_usd" yaml:"daily_cap_usd"`
	AllowedNetworks   []string `json:"allowed_networks" yaml:"allowed_networks"`
	USDCOnly          bool     `json:"usdc_only" yaml:"usdc_only"`
	StrictAllowlist   bool     `json:"strict_allowlist" yaml:"strict_allowlist"`
	NewDomainDays     int      `json:"new_domain_days" yaml:"new_domain_days"`
	ScreenSanctions   bool     `json:"screen_sanctions" yaml:"screen_sanctions"`
	MaxPriceMultiple  *float64 `json:"max_price_multiple" yaml:"max_price_multiple"` // nil (JSON null) disables
	RequireLive       bool     `json:"require_live" yaml:"require_live"`
	HoldOnPayToChange bool     `json:"hold_on_payto_change" yaml:"hold_on_payto_change"`
	DomainAllowlist   []string `json:"domain_allowlist" yaml:"domain_allowlist"`
	DomainBlocklist   []string `json:"domain_blocklist" yaml:"domain_blocklist"`
	PayToAllowlist    []string `json:"payto_allowlist" yaml:"payto_allowlist"`
	PayToBlocklist    []string `json:"payto_blocklist" yaml:"payto_blocklist"`
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
