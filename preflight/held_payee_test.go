package preflight

import (
	"fmt"
	"strings"
	"testing"
)

// An option that is only held can still be approved by a person, so its payee is screened and its amount
// held to the daily cap: a sanctions or spending block outranks the hold (SPEC §4.5 precedence).
func TestHeldOptionStillScreenedAndCapped(t *testing.T) {
	h := newHarness(t)
	// Cart with no pay_to (hold), $0.20 on top of $24.90 spent under the $25 default cap.
	res := h.decide(t, []byte(`{"cart":{"merchant_domain":"api.shop.example","total_usd":0.20},"context":{"spent_today_usd":24.90}}`))
	if res.Decision != "block" || !strings.Contains(strings.Join(res.Reasons, " "), "daily cap") {
		t.Errorf("held cart over the daily cap: %s %v", res.Decision, res.Reasons)
	}
	// Strict allowlist, payee not on it (hold), over the remaining cap.
	res = h.decide(t, []byte(`{"challenge":{"x402Version":2,"resource":{"url":"https://api.shop.example/x"},"accepts":[`+
		v2Option("200000", payA)+`]},"rules":{"strict_allowlist":true,"domain_allowlist":["shop.example"],"payto_allowlist":["`+payB+`"]},"context":{"spent_today_usd":24.90}}`))
	if res.Decision != "block" {
		t.Errorf("held challenge over the daily cap: %s %v", res.Decision, res.Reasons)
	}

	h.sanctions.List(payA)
	res = h.decide(t, []byte(`{"cart":{"merchant_domain":"api.shop.example","total_usd":0.10,"pay_to":"`+payA+`"},"rules":{"strict_allowlist":true,"domain_allowlist":["shop.example"],"payto_allowlist":["`+payB+`"]}}`))
	if res.Decision != "block" || !strings.Contains(strings.Join(res.Reasons, " "), "SDN") {
		t.Errorf("held cart to a listed payee: %s %v", res.Decision, res.Reasons)
	}
	// usdc_only off, a non-USDC asset (unpriced: hold), listed payee.
	opt := fmt.Sprintf(`{"scheme":"exact","network":"eip155:8453","amount":"1000","asset":"0x50c5725949A6F0c72E6C4a641F24049A917DB0Cb","payTo":%q,"maxTimeoutSeconds":300}`, payA)
	res = h.decide(t, []byte(`{"challenge":{"x402Version":2,"resource":{"url":"https://api.shop.example/x"},"accepts":[`+opt+`]},"rules":{"usdc_only":false}}`))
	if res.Decision != "block" || res.Payee == nil || !strings.EqualFold(res.Payee.PayTo, payA) {
		t.Errorf("held unpriced option to a listed payee: %s %v (payee %+v)", res.Decision, res.Reasons, res.Payee)
	}
}

// The domain lists match the host a client actually reaches: IDN and punycode spellings, fullwidth letters
// and an ideographic full stop are the same name.
func TestDomainBlocklistMatchesEverySpellingOfTheHost(t *testing.T) {
	h := newHarness(t)
	for _, c := range []struct{ url, block string }{
		{"https://ｅｖｉｌ.com/x", "evil.com"},
		{"https://evil.com\u3002/x", "evil.com"},
		{"https://xn--bcher-kva.example/x", "bücher.example"},
		{"https://bücher.example/x", "xn--bcher-kva.example"},
		{"https://shop.EVIL.com./x", "Evil.Com"},
	} {
		body := `{"challenge":{"x402Version":2,"resource":{"url":"` + c.url + `"},"accepts":[` + v2Option("10000", payA) +
			`]},"rules":{"domain_blocklist":["` + c.block + `"]}}`
		if res := h.decide(t, []byte(body)); res.Decision != "block" {
			t.Errorf("%s with %s blocklisted: %s %v", c.url, c.block, res.Decision, res.Reasons)
		}
	}
	// A URL whose host cannot be read is not "determined" as its scheme.
	body := `{"challenge":{"x402Version":2,"resource":{"url":"https:/evil.com/x"},"accepts":[` + v2Option("10000", payA) + `]}}`
	if res := h.decide(t, []byte(body)); res.Decision == "allow" {
		t.Errorf("https:/evil.com/x: %s %v, want a hold for an unknown merchant domain", res.Decision, res.Reasons)
	}
}
