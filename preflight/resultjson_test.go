package preflight

import (
	"bytes"
	"context"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/payguard/payguard/screening"
	"github.com/payguard/payguard/x402"
)

// appendResultJSON writes exactly json.Marshal's bytes for every decision vector's result (signed and not),
// and for thousands of results built from hostile strings (quotes, backslashes, control bytes, <>&, U+2028,
// invalid UTF-8, non-ASCII), present and absent pointers, nil and empty lists, and chosen options whose
// extra needs compacting or escaping. When it declines (ok false) the engine uses encoding/json; it must not
// decline the plain results every decision has.
func TestResultJSONIsMarshal(t *testing.T) {
	keys := testKeys(t)
	for _, v := range buildVectorCases() {
		e, in := vectorEngine(t, keys, v)
		res, err := e.Decide(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range []*Result{res, withoutJWS(res)} {
			want, _ := json.Marshal(r)
			got, ok := appendResultJSON([]byte("prefix"), r)
			if !ok || string(got) != "prefix"+string(want) {
				t.Fatalf("%s: ok %v\n%s\njson.Marshal\n%s", v.Name, ok, got, want)
			}
		}
	}
	rnd := rand.New(rand.NewPCG(7, 36))
	strs := []string{"", "allow", "plain text", `quote"d`, `back\slash`, "ctl\x01\n\t\b\f", "<b>&amp;", "caf\u00e9 \u2014 \u65e5\u672c",
		"sep\u2028\u2029", "bad\xff\xfeutf8", "\x7f", "emoji \U0001F600"}
	str := func() string { return strs[rnd.IntN(len(strs))] }
	extras := []string{``, `{"name":"USD Coin","version":"2"}`, "{ \"a\" : [1, 2 ,3] }", `{"html":"<script>"}`, `{"q":"a&b"}`, `{"q":"a>b"}`, "{\"s\":\"\u2028\"}", "{\"s\":\"\u2029\"}", `{"n":1.50}`, `{"q":"x\" y"}`, `{"q":"x\\", "r":1}`, `{"q":"x\\" ,"r":"\\"}`}
	declined := 0
	for i := range 5000 {
		r := &Result{Decision: str(), OptionsEvaluated: rnd.IntN(5) - 1, DataAsOf: str(),
			Receipt: Receipt{ID: str(), TS: str(), InputSHA256: str(), Decision: str()}}
		if rnd.IntN(2) == 0 {
			r.Receipt.JWS = str()
		}
		switch rnd.IntN(3) {
		case 1:
			r.Reasons = []string{}
		case 2:
			r.Reasons = []string{str(), str()}
		}
		if rnd.IntN(3) > 0 {
			req := &x402.Requirement{Version: 1 + rnd.IntN(2), Scheme: str(), Network: str(), Amount: "10000", Asset: str(), PayTo: str(), MaxTimeoutSeconds: 60}
			if x := extras[rnd.IntN(len(extras))]; x != "" {
				req.Extra = json.RawMessage(x)
			}
			r.ChosenOption = req
		}
		if rnd.IntN(4) > 0 {
			p := &Payee{PayTo: str(), Network: str(), MerchantDomain: str(), MerchantName: str()}
			p.Sanctions = PayeeSanctions{Screened: rnd.IntN(2) == 0, Status: str(), Note: str()}
			switch rnd.IntN(3) {
			case 1:
				p.Sanctions.Matches = []screening.SanctionsMatch{}
			case 2:
				p.Sanctions.Matches = []screening.SanctionsMatch{{UID: 1, Name: str(), Score: 0.5, Programs: []string{str()}}}
			}
			b, n, at := rnd.IntN(2) == 0, rnd.IntN(9000)-10, time.Date(2020, 1, 2, 3, 4, 5, rnd.IntN(2)*123456789, time.UTC)
			d := &p.Domain
			d.Checked, d.Note = rnd.IntN(2) == 0, str()
			if rnd.IntN(2) == 0 {
				d.Valid, d.HasA, d.HasMX, d.AgeDays, d.RegisteredAt = &b, &b, &b, &n, &at
			}
			r.Payee = p
		}
		if rnd.IntN(3) == 0 {
			ev := &IndexEvidence{Status: str(), URL: str(), Method: str(), Observations: rnd.IntN(5) - 1, DataAsOf: str(),
				ConsecutiveFailedProbes: rnd.IntN(4) - 1, LastProbeError: str(), Note: str()}
			if rnd.IntN(2) == 0 {
				ev.Price = &PriceEvidence{MedianUSD: str(), Samples: 2, Basis: str(), Category: str(), CategoryHosts: rnd.IntN(3)}
			}
			if rnd.IntN(2) == 0 {
				ev.PayTo = &PayToEvidence{Network: str(), Asset: str(), Latest: []string{str()}, ChangedFrom: str()}
				if rnd.IntN(2) == 0 {
					ev.PayTo.LatestAt = time.Date(2026, 11, 27, 1, 2, 3, rnd.IntN(2)*5, time.UTC)
				}
			}
			r.IndexEvidence = ev
		}
		want, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := appendResultJSON(nil, r)
		if !ok {
			declined++
			continue
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("case %d:\n%s\njson.Marshal\n%s", i, got, want)
		}
	}
	if declined == 0 || declined > 2500 {
		t.Fatalf("declined %d of 5000: the cases do not cover both ways", declined)
	}
	if testing.Verbose() {
		t.Logf("declined %d of 5000 (encoding/json then)", declined)
	}
}

func withoutJWS(r *Result) *Result {
	c := *r
	c.Receipt.JWS = ""
	return &c
}

// appendResultJSON writes Result's members by name: this fails when Result or a type it writes itself gains,
// loses or renames a JSON member, so that it cannot silently leave a new member out of the signed payload.
func TestResultJSONKnowsEveryMember(t *testing.T) {
	for typ, want := range map[reflect.Type]string{
		reflect.TypeFor[Result]():          "decision reasons chosen_option options_evaluated payee receipt data_as_of index_evidence,omitempty",
		reflect.TypeFor[Payee]():           "pay_to network merchant_domain merchant_name sanctions domain",
		reflect.TypeFor[PayeeSanctions]():  "screened status matches note,omitempty",
		reflect.TypeFor[PayeeDomainInfo](): "checked valid registered_at age_days has_a has_mx note,omitempty",
		reflect.TypeFor[Receipt]():         "id ts input_sha256 decision jws,omitempty",
		reflect.TypeFor[IndexEvidence](): "status url,omitempty method,omitempty observations data_as_of payto,omitempty " +
			"price,omitempty consecutive_failed_probes last_probe_error,omitempty note,omitempty",
	} {
		var tags []string
		for f := range typ.Fields() {
			if tag := f.Tag.Get("json"); tag != "-" {
				tags = append(tags, tag)
			}
		}
		if got := strings.Join(tags, " "); got != want {
			t.Errorf("%v's JSON members are %q; appendResultJSON writes %q: update it (and this test)", typ, got, want)
		}
	}
}

// BenchmarkResultJSON is the signing payload's encoding, appendResultJSON against encoding/json, on the
// first decision vector's result (an allow with its chosen option and payee).
func BenchmarkResultJSON(b *testing.B) {
	keys := testKeys(b)
	e, in := vectorEngine(b, keys, buildVectorCases()[0])
	res, err := e.Decide(context.Background(), in)
	if err != nil {
		b.Fatal(err)
	}
	res = withoutJWS(res)
	var buf bytes.Buffer
	b.Run("append", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			buf.Reset()
			out, _ := appendResultJSON(buf.AvailableBuffer(), res)
			buf.Write(out)
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			buf.Reset()
			json.NewEncoder(&buf).Encode(res)
		}
	})
}

// rawMarshaler is a json.Marshaler that writes the given text.
type rawMarshaler string

func (m rawMarshaler) MarshalJSON() ([]byte, error) { return []byte(m), nil }

// appendMarshaler writes what json.Marshal writes for a Marshaler's output (compacted, HTML-escaped), or
// declines; it never passes on text json.Marshal refuses.
func TestAppendMarshaler(t *testing.T) {
	for _, raw := range []string{`{}`, `{"a":"b c"}`, ` {"a" : 1 } `, `{"a":"x\" y"}`, `{"a":"x\\", "b":2}`, `[1,"\\",3]`,
		`{"a":"<"}`, `{"a":" "}`, "{\"a\":\" \"}", `{"a":"\u003c"}`, `"s"`, `1.5e3`, `null`,
		`{"a":}`, `{"a":1} x`, `{"a":"unterminated}`, ``, `{"a":1}}`, "{\"a\":\"\x01\"}", `nul`} {
		want, err := json.Marshal(struct{ M rawMarshaler }{rawMarshaler(raw)})
		got, ok := appendMarshaler([]byte(`{"M":`), rawMarshaler(raw))
		switch {
		case err != nil && ok:
			t.Errorf("%q: json.Marshal refuses it (%v), appendMarshaler wrote %s", raw, err, got)
		case ok && string(got)+"}" != string(want):
			t.Errorf("%q: wrote %s, json.Marshal %s", raw, got, want)
		case err == nil && !ok && !strings.ContainsAny(raw, "<>&  "):
			t.Errorf("%q: declined text json.Marshal writes as %s", raw, want)
		}
	}
}
