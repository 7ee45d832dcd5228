package x402

import (
	"encoding/json"
	"errors"
	"testing"
)

func TestIsSolanaNetwork(t *testing.T) {
	for n, want := range map[string]bool{
		SolanaMainnet: true, SolanaDevnet: true, "solana": true, "solana-devnet": true,
		"solana:4uhcVJyU9pJkvQyS88uRDiswHXSCkY3z": true, // testnet: a well-formed cluster id
		"eip155:8453": false, "base": false, "Solana": false, "solana:": false, "solanax:abc": false, "": false,
	} {
		if got := IsSolanaNetwork(n); got != want {
			t.Errorf("IsSolanaNetwork(%q) = %v", n, got)
		}
	}
}

func TestExactSVM(t *testing.T) {
	for payload, want := range map[string]string{
		`{"transaction":"AQID"}`:                "AQID",
		`{"transaction":"AQID","extra":1}`:      "AQID",
		`{"Transaction":"AQID"}`:                "", // member names match exactly
		`{"transaction":""}`:                    "",
		`{"transaction":1}`:                     "",
		`{"transaction":"a","transaction":"b"}`: "b", // the last of a repeated name, as JSON.parse (the facilitator) reads it
		`{"signature":"0x","authorization":{}}`: "",
	} {
		p := &PaymentPayload{X402Version: V2, Payload: json.RawMessage(payload)}
		got, err := p.ExactSVM()
		if want == "" {
			if !errors.Is(err, ErrNotExactSVM) {
				t.Errorf("%s: %q, %v; want ErrNotExactSVM", payload, got, err)
			}
			continue
		}
		if err != nil || got != want {
			t.Errorf("%s: %q, %v", payload, got, err)
		}
	}
}

func TestRequirementExtraString(t *testing.T) {
	for extra, want := range map[string]struct {
		value   string
		ok, err bool
	}{
		``:                       {},
		`null`:                   {},
		`{}`:                     {},
		`{"feePayer":"Ew"}`:      {value: "Ew", ok: true},
		`{"feePayer":1}`:         {err: true},
		`{"feePayer":null}`:      {err: true},
		`[]`:                     {err: true},
		`{"FeePayer":"Ew"}`:      {},
		`{"feePayer":"a\ud800"}`: {err: true},
	} {
		r := &Requirement{Extra: json.RawMessage(extra)}
		v, ok, err := r.ExtraString("feePayer")
		if v != want.value || ok != want.ok || (err != nil) != want.err {
			t.Errorf("extra %s: %q %v %v", extra, v, ok, err)
		}
	}
}
