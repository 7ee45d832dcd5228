package fees

import (
	"strings"
	"testing"

	"github.com/payguard/payguard/config"
)

// server.fees completes from the known USDC table; pay_to is required; an unknown network needs its asset.
func TestTermsFromConfig(t *testing.T) {
	c := config.FeesConfig{Network: "eip155:8453", PayTo: "0xf54127927F219FB78C8D1A1fF3D7dc6D7f70C98E", MaxTimeoutSeconds: 60}
	tm, err := TermsFromConfig(c)
	if err != nil || tm.Asset != "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913" || tm.AssetName != "USD Coin" || tm.NetworkV1 != "base" {
		t.Fatalf("%+v %v", tm, err)
	}
	c.Network = "eip155:84532"
	if tm, err = TermsFromConfig(c); err != nil || tm.AssetName != "USDC" || tm.NetworkV1 != "base-sepolia" {
		t.Fatalf("%+v %v", tm, err)
	}
	c.PayTo = ""
	if _, err := TermsFromConfig(c); err == nil || !strings.Contains(err.Error(), "pay_to") {
		t.Fatalf("missing pay_to: %v", err)
	}
	c = config.FeesConfig{Network: "eip155:999999", PayTo: "0xf54127927F219FB78C8D1A1fF3D7dc6D7f70C98E", MaxTimeoutSeconds: 60}
	if _, err := TermsFromConfig(c); err == nil {
		t.Fatal("an unknown network without asset was accepted")
	}
}
