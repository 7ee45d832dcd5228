package x402

import "testing"

func TestNetworkAndAssetNames(t *testing.T) {
	for in, want := range map[string]string{"eip155:8453": "Base", "base": "Base", "eip155:84532": "Base Sepolia",
		"base-sepolia": "Base Sepolia", SolanaMainnet: "Solana"} {
		if got, ok := NetworkName(in); !ok || got != want {
			t.Errorf("NetworkName(%q) = %q %v, want %q", in, got, ok, want)
		}
	}
	for _, unknown := range []string{"eip155:999999", "<script>", ""} {
		if got, ok := NetworkName(unknown); ok {
			t.Errorf("NetworkName(%q) = %q", unknown, got)
		}
	}
	if got, ok := AssetName("base", "0x833589fcd6edb6e08f4c7c32d4f71b54bda02913"); !ok || got != "USDC" {
		t.Errorf("Base USDC: %q %v", got, ok)
	}
	if got, ok := AssetName("eip155:84532", "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"); ok {
		t.Errorf("Base mainnet USDC's address on Base Sepolia is named %q", got)
	}
}
