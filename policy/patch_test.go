package policy

import (
	"encoding/json"
	"reflect"
	"testing"
)

// sameAs decides whether Apply may reuse the decode over the defaults, so it must see every rule: changing
// any one field of the defaults makes them differ. A rule added to Rules and not to sameAs fails here.
func TestSameAsSeesEveryRule(t *testing.T) {
	d := DefaultRules()
	if !d.sameAs(&defaultRules) {
		t.Fatal("the defaults differ from themselves")
	}
	rt := reflect.TypeOf(d)
	for i := 0; i < rt.NumField(); i++ {
		r := DefaultRules()
		f := reflect.ValueOf(&r).Elem().Field(i)
		switch f.Kind() {
		case reflect.Int, reflect.Int64:
			f.SetInt(f.Int() + 1)
		case reflect.Bool:
			f.SetBool(!f.Bool())
		case reflect.Slice:
			f.Set(reflect.Append(f, reflect.ValueOf("x")))
		case reflect.Pointer:
			v := 7.5
			f.Set(reflect.ValueOf(&v))
		default:
			t.Fatalf("rule %s has kind %s, which this test does not vary", rt.Field(i).Name, f.Kind())
		}
		if r.sameAs(&defaultRules) {
			t.Fatalf("sameAs does not see a change of %s", rt.Field(i).Name)
		}
	}
	r := DefaultRules()
	r.MaxPriceMultiple = nil
	if r.sameAs(&defaultRules) || defaultRules.sameAs(&r) {
		t.Fatal("a disabled max_price_multiple compares equal to 5")
	}
}

// Apply over the defaults (served from the vetting decode) equals decoding the patch afresh, and hands out
// a copy: changing the result does not change the next one.
func TestApplyOverDefaultsMatchesDecode(t *testing.T) {
	for _, patch := range []string{`{}`, `{"max_per_payment_usd":2,"allowed_networks":["base"]}`,
		`{"max_price_multiple":null,"payto_blocklist":["0xabc"],"usdc_only":false}`} {
		p, err := NewRulesPatch([]byte(patch))
		if err != nil {
			t.Fatal(err)
		}
		want, err := DecodeRulesJSON([]byte(patch), DefaultRules())
		if err != nil {
			t.Fatal(err)
		}
		got, err := p.Apply(DefaultRules())
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: Apply = %+v, %v; decode = %+v", patch, got, err, want)
		}
		got.AllowedNetworks = append(got.AllowedNetworks[:0], "mutated")
		if got.MaxPriceMultiple != nil {
			*got.MaxPriceMultiple = 99
		}
		again, _ := p.Apply(DefaultRules())
		if !reflect.DeepEqual(again, want) {
			t.Fatalf("%s: a caller's change to one result reached the next: %+v", patch, again)
		}
		// Another base still decodes over that base.
		base := DefaultRules()
		base.DailyCapUSD = 3 * MicrosPerUSD
		other, err := p.Apply(base)
		if err != nil || other.DailyCapUSD != 3*MicrosPerUSD {
			t.Fatalf("%s over another base: %+v, %v", patch, other, err)
		}
	}
	// A patch decoded through encoding/json (UnmarshalJSON) behaves the same.
	var in struct {
		Rules *RulesPatch `json:"rules"`
	}
	if err := json.Unmarshal([]byte(`{"rules":{"hold_above_usd":0.5}}`), &in); err != nil {
		t.Fatal(err)
	}
	if r, err := in.Rules.Apply(DefaultRules()); err != nil || r.HoldAboveUSD != 500_000 {
		t.Fatalf("%+v %v", r, err)
	}
}
