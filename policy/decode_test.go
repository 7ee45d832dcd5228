package policy

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestDecodeRulesJSONOverlaysBase(t *testing.T) {
	base := DefaultRules()
	base.DomainBlocklist = []string{"deploy-blocked.com"}
	r, err := DecodeRulesJSON([]byte(`{"max_per_payment_usd": 0.5, "allowed_networks": ["base-sepolia"]}`), base)
	if err != nil {
		t.Fatal(err)
	}
	if r.MaxPerPaymentUSD != 500_000 || r.HoldAboveUSD != 250_000 || len(r.AllowedNetworks) != 1 ||
		r.AllowedNetworks[0] != "base-sepolia" || r.DomainBlocklist[0] != "deploy-blocked.com" || !r.ScreenSanctions {
		t.Fatalf("overlay wrong: %+v", r)
	}
	if base.AllowedNetworks[0] != "eip155:8453" || base.MaxPerPaymentUSD != 1_000_000 {
		t.Fatalf("base was modified: %+v", base)
	}
}

func TestDecodeRulesJSONExactAmounts(t *testing.T) {
	r, err := DecodeRulesJSON([]byte(`{"daily_cap_usd": 0.1, "hold_above_usd": 1e-2}`), DefaultRules())
	if err != nil {
		t.Fatal(err)
	}
	if r.DailyCapUSD != 100_000 || r.HoldAboveUSD != 10_000 {
		t.Fatalf("got %d %d", r.DailyCapUSD, r.HoldAboveUSD)
	}
}

func TestMaxPriceMultipleNullDisables(t *testing.T) {
	base := DefaultRules()
	r, err := DecodeRulesJSON([]byte(`{"max_price_multiple": null}`), base)
	if err != nil || r.MaxPriceMultiple != nil {
		t.Fatalf("JSON null: %v %v", r.MaxPriceMultiple, err)
	}
	if base.MaxPriceMultiple == nil || *base.MaxPriceMultiple != 5 {
		t.Fatal("base modified")
	}
	r, err = DecodeRulesYAML([]byte("max_price_multiple: null\n"), base)
	if err != nil || r.MaxPriceMultiple != nil {
		t.Fatalf("YAML null: %v %v", r.MaxPriceMultiple, err)
	}
	r, err = DecodeRulesJSON([]byte(`{"max_price_multiple": 3}`), base)
	if err != nil || *r.MaxPriceMultiple != 3 || *base.MaxPriceMultiple != 5 {
		t.Fatalf("3: %v %v (base %v)", r.MaxPriceMultiple, err, *base.MaxPriceMultiple)
	}
}

func TestDecodeRulesErrors(t *testing.T) {
	long := make([]string, MaxListEntries+1)
	for i := range long {
		long[i] = fmt.Sprintf("d%d.com", i)
	}
	longJSON, _ := json.Marshal(map[string]any{"domain_blocklist": long})
	cases := []struct {
		name string
		in   string
		is   error
		text string
	}{
		{"unknown rule", `{"max_per_payment": 1}`, ErrUnknownRule, `"max_per_payment"`},
		{"camelCase is unknown over JSON", `{"maxPerPaymentUsd": 1}`, ErrUnknownRule, `"maxPerPaymentUsd"`},
		{"too many entries", string(longJSON), ErrTooManyEntries, "domain_blocklist has 101 entries"},
		{"null rule", `{"usdc_only": null}`, ErrInvalidRules, "usdc_only must not be null"},
		{"negative amount", `{"daily_cap_usd": -1}`, ErrInvalidRules, "negative"},
		{"string amount", `{"daily_cap_usd": "1"}`, ErrInvalidRules, "daily_cap_usd"},
		{"sub-micro amount", `{"daily_cap_usd": 0.0000001}`, ErrInvalidRules, "six decimal places"},
		{"wrong type", `{"usdc_only": "yes"}`, ErrInvalidRules, "usdc_only"},
		{"not an object", `[1]`, ErrInvalidRules, "not a JSON object"},
		{"negative days", `{"new_domain_days": -1}`, ErrInvalidRules, "new_domain_days"},
		{"zero multiple", `{"max_price_multiple": 0}`, ErrInvalidRules, "max_price_multiple"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := DecodeRulesJSON([]byte(c.in), DefaultRules())
			if !errors.Is(err, c.is) || !strings.Contains(err.Error(), c.text) {
				t.Fatalf("got %v, want %v containing %q", err, c.is, c.text)
			}
		})
	}
}

func TestDecodeRulesYAML(t *testing.T) {
	r, err := DecodeRulesYAML([]byte("max_per_payment_usd: 0.75\npayto_blocklist:\n  - 0xabc\nusdc_only: false\n"), DefaultRules())
	if err != nil {
		t.Fatal(err)
	}
	if r.MaxPerPaymentUSD != 750_000 || r.USDCOnly || r.PayToBlocklist[0] != "0xabc" || r.DailyCapUSD != 25_000_000 {
		t.Fatalf("got %+v", r)
	}
	if _, err := DecodeRulesYAML([]byte("max_per_payment_usd: 1\nbogus_rule: 2\n"), DefaultRules()); !errors.Is(err, ErrUnknownRule) || !strings.Contains(err.Error(), `"bogus_rule"`) {
		t.Fatalf("unknown rule: %v", err)
	}
	var b strings.Builder
	b.WriteString("allowed_networks:\n")
	for i := 0; i <= MaxListEntries; i++ {
		fmt.Fprintf(&b, "  - n%d\n", i)
	}
	if _, err := DecodeRulesYAML([]byte(b.String()), DefaultRules()); !errors.Is(err, ErrTooManyEntries) {
		t.Fatalf("long list: %v", err)
	}
	if r, err := DecodeRulesYAML(nil, DefaultRules()); err != nil || r.MaxPerPaymentUSD != 1_000_000 {
		t.Fatalf("empty: %v", err)
	}
	if _, err := DecodeRulesYAML([]byte("daily_cap_usd: '5'\n"), DefaultRules()); err == nil {
		t.Fatal("quoted amount accepted")
	}
}

func TestRulesPatch(t *testing.T) {
	var in struct {
		Rules *RulesPatch `json:"rules"`
	}
	if err := json.Unmarshal([]byte(`{"rules": {"hold_above_usd": 0.5}}`), &in); err != nil {
		t.Fatal(err)
	}
	base := DefaultRules()
	base.DailyCapUSD = 7 * MicrosPerUSD
	r, err := in.Rules.Apply(base)
	if err != nil || r.HoldAboveUSD != 500_000 || r.DailyCapUSD != 7*MicrosPerUSD {
		t.Fatalf("got %+v %v", r, err)
	}
	if err := json.Unmarshal([]byte(`{"rules": {"nope": 1}}`), &in); !errors.Is(err, ErrUnknownRule) {
		t.Fatalf("unknown rule in patch: %v", err)
	}
	var nilPatch *RulesPatch
	if r, err := nilPatch.Apply(base); err != nil || r.DailyCapUSD != 7*MicrosPerUSD {
		t.Fatalf("nil patch: %v", err)
	}
}

func TestDefaultRulesJSONRoundTrip(t *testing.T) {
	data, err := json.Marshal(DefaultRules())
	if err != nil {
		t.Fatal(err)
	}
	r, err := DecodeRulesJSON(data, Rules{})
	if err != nil {
		t.Fatal(err)
	}
	again, _ := json.Marshal(r)
	if string(again) != string(data) {
		t.Fatalf("round trip changed:\n%s\n%s", data, again)
	}
}
