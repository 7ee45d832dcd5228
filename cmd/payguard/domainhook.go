package main

import (
	"github.com/payguard/payguard/config"
	"github.com/payguard/payguard/screening"
	"github.com/payguard/payguard/screening/domain"
	"github.com/payguard/payguard/screening/sanctions"
)

// init connects `payguard preflight` to the real screening: RDAP and DNS domain facts with the built-in
// screening.domain defaults (preflight takes no --config), and sanctions lists from --sanctions-dir.
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
	if loadSanctions == nil {
		loadSanctions = func(dir string) (screening.Sanctions, error) {
			list, err := sanctions.LoadDir(dir)
			if err != nil {
				return nil, err // not a typed nil inside the interface
			}
			return list, nil
		}
	}
}
