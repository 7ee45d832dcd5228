package main

import (
	"github.com/payguard/payguard/config"
	"github.com/payguard/payguard/screening"
	"github.com/payguard/payguard/screening/domain"
)

// init connects `payguard preflight` to the real screening: RDAP and DNS domain facts with the config's
// screening.domain settings (the embedded default's without --config).
func init() {
	newDomainChecker = func(c config.DomainConfig) screening.Domains { return domain.NewFromConfig(c) }
}
