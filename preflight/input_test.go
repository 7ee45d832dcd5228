package preflight

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/payguard/payguard/policy"
	"github.com/payguard/payguard/x402"
)

func TestParseInputLimits(t *testing.T) {
	many := make([]string, MaxOptions+1)
	for i := range many {
		many[i] = v2Option("1", payA)
	}
	longList := make([]string, policy.MaxListEntries+1)
	for i := range longList {
		longList[i] = fmt.Sprintf("%q", fmt.Sprintf("d%d.com", i))
	}
	long := strings.Repeat("a", MaxTextBytes+1)
	cases := []struct {
		name string
		body string
		code string
	}{
		{"body too large", `{"resource_url":"` + strings.Repeat("a", MaxBodyBytes) + `"}`, "body_too_large"},
		{"invalid UTF-8", "{\"resource_url\":\"\xff\"}", "invalid_utf8"},
		{"not JSON", `{"challenge":`, "invalid_json"},
		{"not an object", `[1]`, "invalid_json"},
		{"too deep", `{"challenge":{"x402Version":2,"accepts":[],"extensions":` + strings.Repeat("[", 31) + strings.Repeat("]", 31) + `}}`, "too_deep"},
		{"unknown member", `{"contxt":{"spent_today_usd":24}}`, "unknown_field"},
		{"member names are exact", `{"Context":{}}`, "unknown_field"},
		{"unknown cart member", `{"cart":{"total":1}}`, "unknown_field"},
		{"unknown context member", `{"context":{"spent":1}}`, "unknown_field"},
		{"cart total as string", `{"cart":{"total_usd":"1"}}`, "invalid_field"},
		{"spent as string", `{"context":{"spent_today_usd":"1"}}`, "invalid_field"},
		{"negative spent", `{"context":{"spent_today_usd":-1}}`, "invalid_field"},
		{"url not a string", `{"resource_url":5}`, "invalid_field"},
		{"url too long", `{"resource_url":"` + long + `"}`, "field_too_long"},
		{"cart name too long", `{"cart":{"merchant_name":"` + long + `"}}`, "field_too_long"},
		{"payTo too long", `{"challenge":{"x402Version":2,"accepts":[` + v2Option("1", long) + `]}}`, "field_too_long"},
		{"rule entry too long", `{"rules":{"payto_blocklist":["` + long + `"]}}`, "field_too_long"},
		{"33 options", `{"challenge":{"x402Version":2,"accepts":[` + strings.Join(many, ",") + `]}}`, "too_many_options"},
		{"bad challenge", `{"challenge":{"x402Version":3,"accepts":[]}}`, "invalid_challenge"},
		{"challenge without accepts", `{"challenge":{"x402Version":2}}`, "invalid_challenge"},
		{"unknown rule", `{"rules":{"max_amount":1}}`, "unknown_rule"},
		{"101 entries", `{"rules":{"domain_blocklist":[` + strings.Join(longList, ",") + `]}}`, "too_many_entries"},
		{"bad rule value", `{"rules":{"usdc_only":"no"}}`, "invalid_rules"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseInput([]byte(c.body))
			var ie *InputError
			if !errors.As(err, &ie) || ie.Code != c.code {
				t.Fatalf("got %v, want code %s", err, c.code)
			}
			if ie.Message == "" {
				t.Fatal("empty message")
			}
		})
	}
	if (&InputError{Code: "body_too_large"}).HTTPStatus() != 413 || (&InputError{Code: "too_deep"}).HTTPStatus() != 400 {
		t.Fatal("status mapping")
	}
}

func TestParseInputAccepts(t *testing.T) {
	max := make([]string, MaxOptions)
	for i := range max {
		max[i] = v2Option("1", payA)
	}
	for name, body := range map[string]string{
		"empty object":           `{}`,
		"nulls":                  `{"challenge":null,"cart":null,"rules":null,"context":null}`,
		"32 options":             `{"challenge":{"x402Version":2,"accepts":[` + strings.Join(max, ",") + `]}}`,
		"depth 32":               `{"challenge":{"x402Version":2,"accepts":[],"deep":` + strings.Repeat("[", 30) + strings.Repeat("]", 30) + `}}`,
		"unknown challenge keys": `{"challenge":{"x402Version":2,"accepts":[],"somethingNew":{"a":1}}}`,
		"exact cart total":       `{"cart":{"total_usd":0.1000000}}`,
		"braces inside strings":  `{"resource_url":"` + strings.Repeat("[{", 40) + `"}`,
	} {
		if _, err := ParseInput([]byte(body)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	in, err := ParseInput([]byte(`{"cart":{"total_usd":0.1000000,"pay_to":"x"},"context":{"spent_today_usd":1e-1}}`))
	if err != nil || in.Cart.TotalUSD != 100_000 || in.Context.SpentTodayUSD != 100_000 || in.Cart.TotalProblem != policy.AmountOK {
		t.Fatalf("%+v %v", in, err)
	}
	in, _ = ParseInput([]byte(`{"cart":{"total_usd":0.0000001}}`))
	if in.Cart.TotalProblem != policy.AmountMalformed {
		t.Fatal("sub-micro total should be malformed")
	}
}

func FuzzParseInput(f *testing.F) {
	f.Add([]byte(`{"cart":{"total_usd":1,"pay_to":"0x1"}}`))
	f.Add(fourOptionInput(`,"rules":{"usdc_only":false},"context":{"spent_today_usd":2}`))
	f.Add(fourOptionInput(`,"rules":{"max_per_payment_usd":0.5,"payto_blocklist":["0x1"],"max_price_multiple":null}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		in, err := ParseInput(body)
		if err != nil {
			var ie *InputError
			if !errors.As(err, &ie) {
				t.Fatalf("error is not an *InputError: %v", err)
			}
			return
		}
		if in.Challenge != nil && len(in.Challenge.Accepts) > MaxOptions {
			t.Fatal("too many options accepted")
		}
		if in.Rules != nil { // a memoized patch (rulesMemo) is the one vetting its bytes again gives
			raw, _ := in.Rules.MarshalJSON()
			fresh, err := vetRules(raw)
			if err != nil {
				t.Fatalf("memoized rules %s are refused when vetted again: %v", raw, err)
			}
			got, _ := in.Rules.Apply(policy.DefaultRules())
			want, _ := fresh.Apply(policy.DefaultRules())
			gj, _ := json.Marshal(got)
			wj, _ := json.Marshal(want)
			if !bytes.Equal(gj, wj) {
				t.Fatalf("memoized rules %s decide as %s, vetted again as %s", raw, gj, wj)
			}
		}
	})
}

// x402 stops reading a challenge at its own MaxOptions; it must be SPEC's, the preflight's.
func TestX402ReadsSPECsOptionLimit(t *testing.T) {
	if x402.MaxOptions != MaxOptions {
		t.Fatalf("x402.MaxOptions = %d, preflight.MaxOptions = %d", x402.MaxOptions, MaxOptions)
	}
}

// A repeated member keeps its last value, as encoding/json and JSON.parse do, at every level the input
// reads by name (the input, cart, context).
func TestParseInputRepeatedMemberKeepsTheLast(t *testing.T) {
	in, err := ParseInput([]byte(`{"resource_url":"https://a.example/x","resource_url":"https://b.example/y",` +
		`"cart":{"merchant_domain":"a.example","total_usd":1,"merchant_domain":"b.example","total_usd":2,"pay_to":"x"},` +
		`"context":{"agent_id":"one","agent_id":"two"}}`))
	if err != nil {
		t.Fatal(err)
	}
	var want struct {
		ResourceURL string `json:"resource_url"`
	}
	json.Unmarshal([]byte(`{"resource_url":"https://a.example/x","resource_url":"https://b.example/y"}`), &want)
	if in.ResourceURL != want.ResourceURL || in.ResourceURL != "https://b.example/y" {
		t.Fatalf("resource_url %q, encoding/json %q", in.ResourceURL, want.ResourceURL)
	}
	if in.Cart == nil || in.Cart.MerchantDomain != "b.example" || in.Cart.TotalUSD != 2*policy.USD(1_000_000) {
		t.Fatalf("cart %+v", in.Cart)
	}
	if in.Context == nil || in.Context.AgentID != "two" {
		t.Fatalf("context %+v", in.Context)
	}
}
