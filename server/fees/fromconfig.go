package fees

import (
	"errors"
	"fmt"

	"github.com/payguard/payguard/config"
	"github.com/payguard/payguard/x402"
)

// PayToMissing explains the setting `payguard serve` cannot start without, and how to give it (with the
// operator's contact and, off the testnet, a facilitator: config.ServerConfig.ServeProblems).
const PayToMissing = `server.fees.pay_to is not set: the service is paid in USDC and needs the public wallet
address (0x…) that receives its fees. To start:

  payguard config default > payguard.yaml
  # edit payguard.yaml: server.fees.pay_to: "0xYourWallet", server.contact: "mailto:you@example.com",
  # server.fees.facilitator_url (Base mainnet; or network: eip155:84532 for the public testnet facilitator),
  # and server.base_url for a public host
  payguard serve --config payguard.yaml`

// TermsFromConfig completes server.fees from the known USDC table: the asset, its EIP-712 name and version, and
// the v1 network name.
func TermsFromConfig(c config.FeesConfig) (Terms, error) {
	t := Terms{Network: c.Network, Asset: c.Asset, AssetName: c.AssetName, AssetVersion: c.AssetVersion,
		PayTo: c.PayTo, MaxTimeoutSeconds: c.MaxTimeoutSeconds}
	if usdc, ok := x402.USDCOn(c.Network); ok {
		if t.Asset == "" {
			t.Asset = usdc.Address
		}
		if x402.SameAddress(t.Asset, usdc.Address) {
			t.Asset = usdc.Address
			if t.AssetName == "" {
				t.AssetName = usdc.Name
			}
			if t.AssetVersion == "" {
				t.AssetVersion = usdc.Version
			}
		}
	}
	t.NetworkV1, _ = x402.V1Name(c.Network)
	if c.PayTo == "" {
		return t, errors.New(PayToMissing)
	}
	if err := t.Validate(); err != nil {
		return t, fmt.Errorf("server.fees: %w (set asset, asset_name and asset_version for a token payguard does not know)", err)
	}
	return t, nil
}
