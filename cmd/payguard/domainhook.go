package main

import (
	"github.com/payguard/payguard/config"
	"github.com/payguard/payguard/screening"
	"github.com/payguard/payguard/screening/domain"
)

// init connects `payguard preflight` to the real screening: RDAP and DNS domain facts with the built-in
// screening.domain defaults (preflight takes no --config).
func init() {
	newDomainChecker = func() screening.Domains {
		cfg, err := config.Default()
		if err != nil {
			// The embedded default is tested to parse; should it not, lookups still work with
			// domain's own defaults.
			return domain.New(domain.Options{})
		}
		return domain.NewFromConfig(cfg.Screening.Domain)
	}
}
