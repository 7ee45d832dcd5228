package policy

import "fmt"

// Validate checks bounds that decoding cannot: list lengths and non-negative thresholds.
func (r *Rules) Validate() error {
	for name, l := range map[string][]string{
		"allowed_networks": r.AllowedNetworks, "domain_allowlist": r.DomainAllowlist,
		"domain_blocklist": r.DomainBlocklist, "payto_allowlist": r.PayToAllowlist, "payto_blocklist": r.PayToBlocklist,
	} {
		if len(l) > MaxListEntries {
			return fmt.Errorf("rules: %s has %d entries (at most %d)", name, len(l), MaxListEntries)
		}
	}
	if r.NewDomainDays < 0 {
		return fmt.Errorf("rules: new_domain_days must not be negative")
	}
	if r.MaxPriceMultiple != nil && !(*r.MaxPriceMultiple > 0) {
		return fmt.Errorf("rules: max_price_multiple must be positive or null")
	}
	return nil
}
