package x402

import (
	"errors"
	"strings"
	"testing"
)

func TestCAIP2AndV1Name(t *testing.T) {
	// The full v1 table of reference/x402.md section 7, plus the Solana clusters.
	table := map[string]string{
		"base":               "eip155:8453",
		"base-sepolia":       "eip155:84532",
		"avalanche":          "eip155:43114",
		"avalanche-fuji":     "eip155:43113",
		"polygon":            "eip155:137",
		"polygon-amoy":       "eip155:80002",
		"sei":                "eip155:1329",
		"sei-testnet":        "eip155:1328",
		"iotex":              "eip155:4689",
		"abstract":           "eip155:2741",
		"peaq":               "eip155:3338",
		"story":              "eip155:1514",
		"educhain":           "eip155:41923",
		"skale-base-sepolia": "eip155:324705682",
		"ethereum":           "eip155:1",
		"sepolia":            "eip155:11155111",
		"solana":             "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp",
		"solana-devnet":      "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1",
	}
	for name, id := range table {
		if got, ok := CAIP2(name); !ok || got != id {
			t.Errorf("CAIP2(%q) = %q, %v; want %q", name, got, ok, id)
		}
		if got, ok := V1Name(id); !ok || got != name {
			t.Errorf("V1Name(%q) = %q, %v; want %q", id, got, ok, name)
		}
		if got, ok := CAIP2(id); !ok || got != id {
			t.Errorf("CAIP2(%q) = %q, %v; a CAIP-2 id is returned as is", id, got, ok)
		}
		evm := strings.HasPrefix(id, "eip155:")
		if IsEVMNetwork(name) != evm || IsEVMNetwork(id) != evm {
			t.Errorf("IsEVMNetwork(%q/%q) should be %v", name, id, evm)
		}
	}

	// Well-formed CAIP-2 ids v1 has no name for.
	for _, id := range []string{"eip155:42161", "eip155:10", "cosmos:cosmoshub-3", "bip122:000000000019d6689c085ae165831e93"} {
		if got, ok := CAIP2(id); !ok || got != id {
			t.Errorf("CAIP2(%q) = %q, %v", id, got, ok)
		}
		if _, ok := V1Name(id); ok {
			t.Errorf("V1Name(%q) should not exist", id)
		}
	}
	if !IsEVMNetwork("eip155:42161") || IsEVMNetwork("solana") || IsEVMNetwork("cosmos:cosmoshub-3") {
		t.Error("IsEVMNetwork misclassifies")
	}

	for _, bad := range []string{
		"", "Base", "BASE", " base", "base ", "eip155:", "eip155:08453", "eip155:0x2105", "eip155:-1",
		"eip155:8453:1", "EIP155:8453", "ei:1", "namespacetoolong:1", "eip155:99999999999999999999",
		"solana:" + strings.Repeat("a", 33), "solana:abc def", "unknown-chain",
	} {
		if got, ok := CAIP2(bad); ok {
			t.Errorf("CAIP2(%q) = %q, want not ok", bad, got)
		}
		if IsEVMNetwork(bad) {
			t.Errorf("IsEVMNetwork(%q) should be false", bad)
		}
	}
}

func TestUSDC(t *testing.T) {
	cases := []struct {
		network, asset, name string
	}{
		{"base", "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913", "USD Coin"},
		{"eip155:8453", "0x833589fcd6edb6e08f4c7c32d4f71b54bda02913", "USD Coin"},
		{"eip155:8453", "0x833589FCD6EDB6E08F4C7C32D4F71B54BDA02913", "USD Coin"},
		{"base-sepolia", "0x036CbD53842c5426634e7929541eC2318f3dCF7e", "USDC"},
		{"eip155:84532", "0x036cbd53842c5426634e7929541ec2318f3dcf7e", "USDC"},
		{"ethereum", "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48", "USD Coin"},
		{"polygon", "0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359", "USD Coin"},
		{"polygon-amoy", "0x41E94Eb019C0762f9Bfcf9Fb1E58725BfB0e7582", "USDC"},
		{"avalanche", "0xB97EF9Ef8734C71904D8002F8b6Bc66Dd9c48a6E", "USD Coin"},
		{"avalanche-fuji", "0x5425890298aed601595a70AB815c96711a31Bc65", "USD Coin"},
		{"eip155:42161", "0xaf88d065e77c8cC2239327C5EDb3A432268e5831", "USD Coin"},
		{"eip155:421614", "0x75faf114eafb1BDbe2F0316DF893fd58CE46AA4d", "USD Coin"},
		{"eip155:143", "0x754704Bc059F8C67012fEd69BC8A327a5aafb603", "USDC"},
		{"sei", "0xe15fC38F6D8c56aF07bbCBe3BAf5708A2Bf42392", "USDC"},
		{"sei-testnet", "0x4fCF1784B31630811181f670Aea7A7bEF803eaED", "USDC"},
		{"eip155:42220", "0xcebA9300f2b948710d2653dD7B07f33A8B32118C", "USDC"},
		{"solana", "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v", ""},
		{SolanaDevnet, "4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU", ""},
	}
	for _, c := range cases {
		a, ok := LookupUSDC(c.network, c.asset)
		if !ok {
			t.Errorf("LookupUSDC(%q, %q) not found", c.network, c.asset)
			continue
		}
		if a.Name != c.name || a.Symbol != "USDC" || a.Decimals != 6 {
			t.Errorf("LookupUSDC(%q, %q) = %+v, want name %q", c.network, c.asset, a, c.name)
		}
		if IsEVMNetwork(c.network) && a.Version != "2" {
			t.Errorf("%s: EIP-712 version %q", c.network, a.Version)
		}
		if on, ok := USDCOn(c.network); !ok || on != a {
			t.Errorf("USDCOn(%q) = %+v, %v", c.network, on, ok)
		}
	}
	misses := []struct{ network, asset string }{
		// The right address on the wrong network is not USDC there.
		{"base-sepolia", "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"},
		{"base", "0x036CbD53842c5426634e7929541eC2318f3dCF7e"},
		// Base58 is case-sensitive.
		{"solana", "epjfwdd5aufqssqem2qn1xzybapc8g4wegGkzwytdt1v"},
		{"solana", "EPJFWDD5AUFQSSQEM2QN1XZYBAPC8G4WEGGKZWYTDT1V"},
		// Not the USDC address, or not an address.
		{"base", "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA0291"},
		{"base", "833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"},
		{"base", ""},
		{"base", " 0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"},
		// Unknown or malformed networks.
		{"Base", "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"},
		{"eip155:999", "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"},
		{"", "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"},
	}
	for _, m := range misses {
		if a, ok := LookupUSDC(m.network, m.asset); ok {
			t.Errorf("LookupUSDC(%q, %q) = %+v, want no match", m.network, m.asset, a)
		}
	}
	if _, ok := USDCOn("iotex"); ok {
		t.Error("iotex has no USDC entry here")
	}
	all := KnownUSDC()
	all[0].Name = "mutated"
	if a, _ := USDCOn("base"); a.Name != "USD Coin" {
		t.Error("KnownUSDC must return a copy")
	}
}

func TestAddresses(t *testing.T) {
	evm := []string{"0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913", "0x0000000000000000000000000000000000000000", "0xABCDEFabcdef0123456789ABCDEFabcdef012345"}
	notEVM := []string{"", "0x", "833589fCD6eDb6E08f4c7C32D4f71b54bdA02913", "0X833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
		"0x833589fCD6eDb6E08f4c7C32D4f71b54bdA0291", "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA029133", "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA0291g",
		"EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"}
	for _, a := range evm {
		if !IsEVMAddress(a) {
			t.Errorf("IsEVMAddress(%q) = false", a)
		}
		if CanonicalAddress(a) != strings.ToLower(a) {
			t.Errorf("CanonicalAddress(%q) = %q", a, CanonicalAddress(a))
		}
	}
	for _, a := range notEVM {
		if IsEVMAddress(a) {
			t.Errorf("IsEVMAddress(%q) = true", a)
		}
		if CanonicalAddress(a) != a {
			t.Errorf("CanonicalAddress(%q) changed a non-EVM value", a)
		}
	}
	same := [][2]string{
		{"0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913", "0x833589FCD6EDB6E08F4C7C32D4F71B54BDA02913"},
		{"0x833589fcd6edb6e08f4c7c32d4f71b54bda02913", "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"},
		{"EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v", "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"},
		{"", ""},
	}
	differ := [][2]string{
		{"EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v", "epjfwdd5aufqssqem2qn1xzybapc8g4weggkzwytdt1v"},
		{"0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913", "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02914"},
		// Only two EVM addresses fold case; an EVM-looking value against a non-address does not.
		{"0xabc", "0xABC"},
		{"0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913", " 0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"},
	}
	for _, p := range same {
		if !SameAddress(p[0], p[1]) || !SameAddress(p[1], p[0]) {
			t.Errorf("SameAddress(%q, %q) = false", p[0], p[1])
		}
	}
	for _, p := range differ {
		if SameAddress(p[0], p[1]) || SameAddress(p[1], p[0]) {
			t.Errorf("SameAddress(%q, %q) = true", p[0], p[1])
		}
	}
}

func TestParseAtomic(t *testing.T) {
	ok := map[string]uint64{
		"0":                   0,
		"1":                   1,
		"10000":               10000,
		"0010":                10, // leading zeros: accepted, the value is unambiguous (BigInt reads it the same)
		"000":                 0,
		"999999999999999999":  999999999999999999,
		"1000000000000000000": MaxAtomic,
		"0000000000000000000000000001000000000000000000": MaxAtomic,
	}
	for s, want := range ok {
		if got, err := ParseAtomic(s); err != nil || got != want {
			t.Errorf("ParseAtomic(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
	bad := map[string]error{
		"-1":                    ErrAmountNegative,
		"-0":                    ErrAmountNegative,
		"-":                     ErrAmountNegative,
		"-abc":                  ErrAmountNegative,
		"1000000000000000001":   ErrAmountOversized,
		"18446744073709551615":  ErrAmountOversized, // max uint64
		"18446744073709551616":  ErrAmountOversized, // max uint64 + 1
		strings.Repeat("9", 80): ErrAmountOversized,
		"":                      ErrAmountMalformed,
		"+1":                    ErrAmountMalformed,
		" 1":                    ErrAmountMalformed,
		"1 ":                    ErrAmountMalformed,
		"1e6":                   ErrAmountMalformed,
		"1.0":                   ErrAmountMalformed,
		"1.5":                   ErrAmountMalformed,
		"0x10":                  ErrAmountMalformed,
		"1_000":                 ErrAmountMalformed,
		"1,000":                 ErrAmountMalformed,
		"NaN":                   ErrAmountMalformed,
		"Infinity":              ErrAmountMalformed,
		"١٢":                    ErrAmountMalformed, // Arabic-Indic digits
		"１":                     ErrAmountMalformed, // fullwidth digit
		"10\x00":                ErrAmountMalformed,
		// Oversized digits followed by junk are malformed, not oversized.
		strings.Repeat("9", 30) + "x": ErrAmountMalformed,
	}
	for s, want := range bad {
		got, err := ParseAtomic(s)
		if !errors.Is(err, want) {
			t.Errorf("ParseAtomic(%q) = %d, %v; want an error wrapping %v", s, got, err, want)
		}
		if got != 0 {
			t.Errorf("ParseAtomic(%q) returned %d alongside an error", s, got)
		}
	}
	// Error messages stay short whatever the input.
	_, err := ParseAtomic(strings.Repeat("x", 10000))
	if err == nil || len(err.Error()) > 200 {
		t.Errorf("long input error: %v", err)
	}
}

// The v1 names @x402/evm's v1 client knows beyond x402@1.2.0's table, and abstract-testnet.
func TestNewerV1NetworkNames(t *testing.T) {
	for name, id := range map[string]string{
		"abstract-testnet": "eip155:11124", "celo": "eip155:42220", "monad": "eip155:143", "megaeth": "eip155:4326",
		"stable": "eip155:988", "stable-testnet": "eip155:2201", "flare": "eip155:14",
	} {
		if got, ok := CAIP2(name); !ok || got != id {
			t.Errorf("CAIP2(%q) = %q, %v; want %s", name, got, ok, id)
		}
		if back, ok := V1Name(id); !ok || back != name {
			t.Errorf("V1Name(%q) = %q, %v; want %s", id, back, ok, name)
		}
	}
}
