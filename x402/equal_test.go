package x402

import (
	"encoding/json"
	"testing"
)

func TestRequirementEqual(t *testing.T) {
	base := func() Requirement {
		return Requirement{
			Version: V2, Scheme: "exact", Network: "eip155:84532", Amount: "10000",
			Asset: "0x036CbD53842c5426634e7929541eC2318f3dCF7e", PayTo: "0xf54127927F219FB78C8D1A1fF3D7dc6D7f70C98E",
			MaxTimeoutSeconds: 60, Extra: json.RawMessage(`{"name":"USDC","version":"2"}`),
		}
	}
	cases := []struct {
		name   string
		change func(required, accepted *Requirement)
		want   bool
	}{
		{"identical", func(r, a *Requirement) {}, true},
		{"extra members reordered", func(r, a *Requirement) { a.Extra = json.RawMessage(`{"version":"2","name":"USDC"}`) }, true},
		{"extra whitespace", func(r, a *Requirement) { a.Extra = json.RawMessage(`{ "name" : "USDC", "version" : "2" }`) }, true},
		{"accepted extra adds a member", func(r, a *Requirement) { a.Extra = json.RawMessage(`{"name":"USDC","version":"2","quote":"q"}`) }, true},
		{"accepted extra drops a member", func(r, a *Requirement) { a.Extra = json.RawMessage(`{"name":"USDC"}`) }, false},
		{"accepted extra changes a value", func(r, a *Requirement) { a.Extra = json.RawMessage(`{"name":"USD Coin","version":"2"}`) }, false},
		{"accepted has no extra", func(r, a *Requirement) { a.Extra = nil }, false},
		{"required has no extra", func(r, a *Requirement) { r.Extra = nil }, true},
		{"nested subset", func(r, a *Requirement) {
			r.Extra = json.RawMessage(`{"d":{"x":1}}`)
			a.Extra = json.RawMessage(`{"d":{"x":1.0,"y":2},"e":3}`)
		}, true},
		{"nested missing", func(r, a *Requirement) {
			r.Extra = json.RawMessage(`{"d":{"x":1,"z":0}}`)
			a.Extra = json.RawMessage(`{"d":{"x":1}}`)
		}, false},
		{"arrays must be equal", func(r, a *Requirement) {
			r.Extra = json.RawMessage(`{"l":[1,2]}`)
			a.Extra = json.RawMessage(`{"l":[1,2,3]}`)
		}, false},
		{"extra scalar vs object", func(r, a *Requirement) { a.Extra = json.RawMessage(`"USDC"`) }, false},
		{"extra null vs null", func(r, a *Requirement) { r.Extra, a.Extra = json.RawMessage(`null`), json.RawMessage(`null`) }, true},
		{"amount", func(r, a *Requirement) { a.Amount = "10001" }, false},
		{"amount leading zero (the SDK compares strings)", func(r, a *Requirement) { a.Amount = "010000" }, false},
		{"payTo case (the SDK compares exactly)", func(r, a *Requirement) { a.PayTo = "0xf54127927f219fb78c8d1a1ff3d7dc6d7f70c98e" }, false},
		{"asset", func(r, a *Requirement) { a.Asset = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913" }, false},
		{"network", func(r, a *Requirement) { a.Network = "eip155:8453" }, false},
		{"scheme", func(r, a *Requirement) { a.Scheme = "upto" }, false},
		{"timeout", func(r, a *Requirement) { a.MaxTimeoutSeconds = 300 }, false},
		{"unknown on both", func(r, a *Requirement) {
			r.Unknown = map[string]json.RawMessage{"tag": json.RawMessage(`{"a":1,"b":2}`)}
			a.Unknown = map[string]json.RawMessage{"tag": json.RawMessage(`{"b":2,"a":1}`)}
		}, true},
		{"unknown only on accepted", func(r, a *Requirement) {
			a.Unknown = map[string]json.RawMessage{"resource": json.RawMessage(`"http://x"`)}
		}, false},
		{"unknown only on required", func(r, a *Requirement) {
			r.Unknown = map[string]json.RawMessage{"tag": json.RawMessage(`1`)}
		}, false},
		{"unknown differs", func(r, a *Requirement) {
			r.Unknown = map[string]json.RawMessage{"tag": json.RawMessage(`1`)}
			a.Unknown = map[string]json.RawMessage{"tag": json.RawMessage(`2`)}
		}, false},
		{"v1 descriptive field", func(r, a *Requirement) { r.Description = "x" }, false},
		{"outputSchema", func(r, a *Requirement) { r.OutputSchema = json.RawMessage(`{}`) }, false},
		{"v1 against v2", func(r, a *Requirement) { r.Version = V1 }, false},
		{"unset version is v2", func(r, a *Requirement) { r.Version = 0 }, true},
	}
	for _, c := range cases {
		r, a := base(), base()
		c.change(&r, &a)
		if got := r.Equal(a); got != c.want {
			t.Errorf("%s: Equal = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestJSONEqual(t *testing.T) {
	cases := []struct {
		a, b string
		want bool
	}{
		{`{"a":1,"b":[1,2]}`, `{"b":[1,2],"a":1}`, true},
		{`{"a":1}`, `{"a":1.0}`, true},
		{`{"a":1e2}`, `{"a":100}`, true},
		{`{"a":"1"}`, `{"a":1}`, false},
		{`[1,2]`, `[2,1]`, false},
		{`{"a":null}`, `{}`, false},
		{`{}`, `{} x`, false},
		{`{`, `{`, false},
		{`"\u00e9"`, `"é"`, true},
	}
	for _, c := range cases {
		if got := JSONEqual([]byte(c.a), []byte(c.b)); got != c.want {
			t.Errorf("JSONEqual(%s, %s) = %v", c.a, c.b, got)
		}
	}
}
