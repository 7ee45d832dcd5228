package preflight

import (
	"slices"
	"testing"

	"github.com/payguard/payguard/x402"
)

// networkIDs shares the lists of known networks: each call, first or cached, gives every name of the
// network as it did when it wrote the list afresh, and a list handed out cannot be grown in place.
func TestNetworkIDs(t *testing.T) {
	fresh := func(network string) []string {
		ids := []string{network}
		if id, ok := x402.CAIP2(network); ok {
			if id != network {
				ids = append(ids, id)
			}
			if name, ok := x402.V1Name(id); ok && name != network {
				ids = append(ids, name)
			}
		}
		return ids
	}
	for _, n := range []string{"base", "eip155:8453", "base-sepolia", "eip155:84532", "solana", "solana-devnet",
		"solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp", "eip155:999999", "eip155:08453", "Base", "", "polygon", "eip155:137", "x"} {
		for range 2 {
			got := networkIDs(n)
			if !slices.Equal(got, fresh(n)) {
				t.Fatalf("networkIDs(%q) = %q, want %q", n, got, fresh(n))
			}
			if cap(got) != len(got) && len(got) > 1 {
				t.Fatalf("networkIDs(%q) has room to grow in place", n)
			}
		}
	}
}
