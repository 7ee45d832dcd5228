package preflight

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/payguard/payguard/policy"
)

func rulesBody(rules string) []byte {
	return []byte(`{"cart":{"merchant_domain":"shop.example","total_usd":1},"rules":` + rules + `}`)
}

// The same rules object is vetted once: a second input with the same bytes gets the same patch, and the patch
// decides as a freshly vetted one does.
func TestRulesMemoSameBytesOnePatch(t *testing.T) {
	const rules = `{"max_per_payment_usd":0.75,"domain_blocklist":["evil.example"]}`
	a, err := ParseInput(rulesBody(rules))
	if err != nil {
		t.Fatal(err)
	}
	b, err := ParseInput(rulesBody(rules))
	if err != nil {
		t.Fatal(err)
	}
	if a.Rules != b.Rules {
		t.Fatal("the same rules bytes were vetted twice: no memo")
	}
	fresh, err := vetRules([]byte(rules))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := b.Rules.Apply(policy.DefaultRules())
	want, _ := fresh.Apply(policy.DefaultRules())
	gj, _ := json.Marshal(got)
	wj, _ := json.Marshal(want)
	if !bytes.Equal(gj, wj) || got.MaxPerPaymentUSD != 750_000 {
		t.Fatalf("memoized patch decodes to %+v, a fresh one to %+v", got, want)
	}
	// Another spelling of the same rules (whitespace) is another key, vetted on its own, with the same rules.
	c, err := ParseInput(rulesBody(`{ "max_per_payment_usd":0.75,"domain_blocklist":["evil.example"]}`))
	if err != nil {
		t.Fatal(err)
	}
	if c.Rules == a.Rules {
		t.Fatal("different bytes share a patch")
	}
}

// The memo's key is a copy: a caller that reuses its buffer for other rules gets those rules, not the old
// patch.
func TestRulesMemoKeyIsACopy(t *testing.T) {
	buf := rulesBody(`{"max_per_payment_usd":0.31}`)
	a, err := ParseInput(buf)
	if err != nil {
		t.Fatal(err)
	}
	copy(buf[bytes.Index(buf, []byte("0.31")):], "0.42")
	b, err := ParseInput(buf)
	if err != nil {
		t.Fatal(err)
	}
	ra, _ := a.Rules.Apply(policy.DefaultRules())
	rb, _ := b.Rules.Apply(policy.DefaultRules())
	if ra.MaxPerPaymentUSD != 310_000 || rb.MaxPerPaymentUSD != 420_000 {
		t.Fatalf("rules after reusing the buffer: %d then %d", ra.MaxPerPaymentUSD, rb.MaxPerPaymentUSD)
	}
}

// A refused rules object is never remembered: it is refused every time, with its own code.
func TestRulesMemoKeepsNoRefusal(t *testing.T) {
	for _, c := range []struct{ rules, code string }{
		{`{"max_per_payment":1}`, "unknown_rule"},
		{`{"max_per_payment_usd":"x"}`, "invalid_rules"},
		{`{"domain_blocklist":["` + string(bytes.Repeat([]byte("a"), MaxTextBytes+1)) + `"]}`, "field_too_long"},
	} {
		for range 2 {
			_, err := ParseInput(rulesBody(c.rules))
			if ie, ok := err.(*InputError); !ok || ie.Code != c.code {
				t.Fatalf("%.40s: %v, want %s", c.rules, err, c.code)
			}
		}
		if vettedRules.get([]byte(c.rules)) != nil {
			t.Fatalf("%.40s: a refused object is memoized", c.rules)
		}
	}
}

// The memo holds at most maxCachedRules objects of at most maxCachedRulesBytes: a caller who varies its rules
// on every call cannot grow it.
func TestRulesMemoIsBounded(t *testing.T) {
	var m rulesMemo
	m.m = map[string]*policy.RulesPatch{}
	p := &policy.RulesPatch{}
	for i := range 10 * maxCachedRules {
		m.put(fmt.Appendf(nil, `{"max_per_payment_usd":%d}`, i), p)
		if len(m.m) > maxCachedRules {
			t.Fatalf("%d entries after %d puts", len(m.m), i+1)
		}
	}
	big := bytes.Repeat([]byte(" "), maxCachedRulesBytes+1)
	m.put(big, p)
	if m.get(big) != nil {
		t.Fatal("an object over maxCachedRulesBytes is memoized")
	}
}
