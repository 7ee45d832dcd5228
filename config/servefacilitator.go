package config

import (
	"errors"
	"fmt"
)

// PublicTestnetFacilitator is x402.org's public facilitator: it settles on testnets only.
const PublicTestnetFacilitator = "https://x402.org/facilitator"

// TestnetFacilitatorNetworks are the networks on which an unset server.fees.facilitator_url means
// PublicTestnetFacilitator.
var TestnetFacilitatorNetworks = map[string]bool{"eip155:84532": true}

// Facilitator is the facilitator serve uses: facilitator_url when set; PublicTestnetFacilitator on a testnet
// it serves; otherwise an error that says what to set. A mainnet fee network never gets a default
// facilitator that cannot settle there (the public one answers /supported without it, and every paid call
// would fail).
func (c FeesConfig) Facilitator() (string, error) {
	if c.FacilitatorURL != "" {
		return c.FacilitatorURL, nil
	}
	if TestnetFacilitatorNetworks[c.Network] {
		return PublicTestnetFacilitator, nil
	}
	return "", fmt.Errorf("server.fees.facilitator_url is not set, and there is no default facilitator for %s: "+
		"set one that settles on %s (the public %s settles only on testnets, e.g. network: eip155:84532)",
		c.Network, c.Network, PublicTestnetFacilitator)
}

// ServeProblems is what `payguard serve` needs beyond a valid file and its fee terms (pay_to, checked with
// them): the operator's contact and a facilitator for the fee network. Every problem is reported.
func (c ServerConfig) ServeProblems() error {
	var errs []error
	if c.Contact == "" {
		errs = append(errs, errors.New("server.contact is not set: give your own security contact (mailto: or https: URI); "+
			"it is published in /.well-known/security.txt, /terms and /privacy"))
	}
	if _, err := c.Fees.Facilitator(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}
