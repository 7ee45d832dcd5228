package policy

import (
	"errors"
	"fmt"
	"sort"
)

// Validate checks bounds that decoding cannot: list lengths and non-negative thresholds.
// Every problem is reported, not only the first.
func (r *Rules) Validate() error {
	var errs []error
	lists := map[string][]string{
		"allowed_networks": r.AllowedNetworks, "domain_allowlist": r.DomainAllowlist,
		"domain_blocklist": r.DomainBlocklist, "payto_allowlist": r.PayToAllowlist, "payto_blocklist": r.PayToBlocklist,
	}
	names := make([]string, 0, len(lists))
	for name := range lists {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if l := lists[name]; len(l) > MaxListEntries {
			errs = append(errs, fmt.Errorf("rules: %s has %d entries (at most %d)", name, len(l), MaxListEntries))
		}
	}
	if r.NewDomainDays < 0 {
		errs = append(errs, fmt.Errorf("rules: new_domain_days must not be negative"))
	}
	if r.MaxPriceMultiple != nil && !(*r.MaxPriceMultiple > 0) {
		errs = append(errs, fmt.Errorf("rules: max_price_multiple must be positive or null"))
	}
	return errors.Join(errs...)
}
