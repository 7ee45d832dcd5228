package preflight

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/payguard/payguard/screening"
	"github.com/payguard/payguard/x402"
)

// FuzzResultJSON holds appendResultJSON (the signed payload of every receipt) to json.Marshal on any strings
// in the fields a seller or an agent can put text into (the chosen option's scheme, network, asset, payee,
// amount and extra JSON, its unknown members, the merchant's name and domain, notes), not only TestResultJSONIsMarshal's
// fixed list (review36). When it writes, it must write json.Marshal's bytes: a receipt whose payload differs
// from the result's JSON would not verify against it.
func FuzzResultJSON(f *testing.F) {
	f.Add("exact", "eip155:8453", "0xAbC", "10000", `{"name":"USD Coin","version":"2"}`, "shop <b>&", "caf\u00e9\u2028", `{"k":"v"}`)
	f.Add("", "\x00\x1f\x7f", "bad\xff", "1e3", "{ \"a\" : [1, 2 ,3] }", "\"\\", "\u2029", `[1,"<"]`)
	f.Add("exact", "base", "0xabc", "10000", `{"name":"USDC"}`, "shop", "ok", `1`)
	f.Add("a", "b", "c", "d", `{"q":"x\\" ,"r":"\\"}`, "\ud7ff", "\U0001F600", `"\u2028"`)
	f.Fuzz(func(t *testing.T, scheme, network, payTo, amount, extra, name, note, unknown string) {
		req := &x402.Requirement{Version: 2, Scheme: scheme, Network: network, Amount: amount, Asset: payTo, PayTo: payTo, MaxTimeoutSeconds: 60}
		if json.Valid([]byte(extra)) {
			req.Extra = json.RawMessage(extra)
		}
		if json.Valid([]byte(unknown)) {
			req.Unknown = map[string]json.RawMessage{name: json.RawMessage(unknown)}
		}
		at, days, yes := time.Date(2020, 1, 2, 3, 4, 5, 6, time.UTC), 42, true
		r := &Result{Decision: "allow", Reasons: []string{note, name}, ChosenOption: req, OptionsEvaluated: 1, DataAsOf: note,
			Payee: &Payee{PayTo: payTo, Network: network, MerchantDomain: name, MerchantName: name,
				Sanctions: PayeeSanctions{Screened: true, Status: note, Note: note,
					Matches: []screening.SanctionsMatch{{UID: 7, Name: name, Score: 0.91, Programs: []string{note}}}},
				Domain: PayeeDomainInfo{Checked: true, Valid: &yes, RegisteredAt: &at, AgeDays: &days, HasA: &yes, HasMX: &yes, Note: note}},
			Receipt:       Receipt{ID: name, TS: note, InputSHA256: amount, Decision: "allow"},
			IndexEvidence: &IndexEvidence{Status: note, URL: name, Observations: 3, DataAsOf: note, Note: note}}
		want, err := json.Marshal(r)
		if err != nil {
			return // encoding/json refuses it too (the engine then fails closed)
		}
		got, ok := appendResultJSON([]byte("prefix"), r)
		if ok && !bytes.Equal(got, append([]byte("prefix"), want...)) {
			t.Fatalf("appendResultJSON\n%s\njson.Marshal\nprefix%s", got, want)
		}
		// Not vacuous: a result of plain letters and digits (and extra as JSON of them) is written, not declined.
		plain := scheme != "" && network != "" && payTo != "" && amount != "" && name != "" && note != "" &&
			alnum(scheme+network+payTo+amount+name+note) && strings.HasPrefix(extra, `{"`) && alnum(strings.NewReplacer("{", "", "}", "", `"`, "", ":", "").Replace(extra)) &&
			req.Extra != nil && req.Unknown != nil && alnum(unknown)
		if !ok && plain {
			t.Fatalf("appendResultJSON declined a plain result (extra %s)", extra)
		}
	})
}

func alnum(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			return false
		}
	}
	return true
}
