package view

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/payguard/payguard/store"
)

// The hold view names the network and asset (Base, Base Sepolia, USDC) beside their raw values, and
// carries the seller's v2 resource.description kept with the hold.
func TestHoldOfNamesNetworkAndAsset(t *testing.T) {
	dec, _ := json.Marshal(map[string]any{"decision": "hold", "reasons": []string{"hold: x"},
		"chosen_option": map[string]any{"scheme": "exact", "network": "eip155:84532", "asset": "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
			"amount": "10000", "payTo": "0x1111111111111111111111111111111111111111", "maxTimeoutSeconds": 60}})
	v := HoldOf(store.Hold{ID: "hold_1", Method: "GET", URL: "https://seller.example/w", Decision: dec,
		Description: "Weather report for Lisbon", ExpiresAt: time.Now().Add(time.Hour)}, time.Now())
	if v.NetworkName != "Base Sepolia" || v.AssetName != "USDC" || v.Network != "eip155:84532" ||
		v.Description != "Weather report for Lisbon" {
		t.Fatalf("hold view: %+v", v)
	}
}
