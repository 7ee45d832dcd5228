package domain

import (
	"time"

	"github.com/payguard/payguard/config"
)

// OptionsFromConfig maps the `screening.domain` section onto Options. A disabled section is Offline.
func OptionsFromConfig(c config.DomainConfig) Options {
	return Options{
		Offline:          !c.Enabled,
		RDAPBaseURL:      c.RDAPBaseURL,
		BootstrapURL:     c.BootstrapURL,
		BootstrapRefresh: time.Duration(c.BootstrapRefresh),
		Resolver:         c.Resolver,
		RDAPTimeout:      time.Duration(c.RDAPTimeout),
		DNSTimeout:       time.Duration(c.DNSTimeout),
		PositiveTTL:      time.Duration(c.PositiveTTL),
		NegativeTTL:      time.Duration(c.NegativeTTL),
		CacheSize:        c.CacheSize,
	}
}

// NewFromConfig returns a Checker for the `screening.domain` section. Callers that run long (serve,
// proxy) should also start its Run loop to keep the RDAP bootstrap fresh.
func NewFromConfig(c config.DomainConfig) *Checker { return New(OptionsFromConfig(c)) }
