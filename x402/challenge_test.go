package x402

import (
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

// fixtureChallenge returns the decoded challenge of a fixture file: the v1 body or the v2 header.
func fixtureChallenge(t *testing.T, path string) (*PaymentRequired, []byte) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	type msg struct {
		Headers [][]string `json:"headers"`
		Body    string     `json:"body"`
	}
	var doc struct {
		msg
		Response *msg `json:"response"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Response == nil { // a response-only capture
		doc.Response = &doc.msg
	}
	for _, h := range doc.Response.Headers {
		if strings.EqualFold(h[0], HeaderPaymentRequired) {
			var wire json.RawMessage
			if err := DecodeHeaderJSON(h[1], &wire); err != nil {
				t.Fatal(err)
			}
			p, err := DecodePaymentRequiredHeader(h[1])
			if err != nil {
				t.Fatal(err)
			}
			return p, wire
		}
	}
	p, err := ParsePaymentRequired([]byte(doc.Response.Body))
	if err != nil {
		t.Fatal(err)
	}
	return p, []byte(doc.Response.Body)
}

var challengeFixtures = []string{
	"testdata/fixtures/v1/challenge-402.json",
	"testdata/fixtures/v1/tamper-response.json",
	"testdata/fixtures/v2/challenge-402.json",
	"testdata/fixtures/v2/tamper-response.json",
	"testdata/fixtures/v2-offer-receipt/challenge-402.json",
}

// TestChallengeRoundTrip: decode → encode → decode gives equal values, and the encoding is the same JSON
// value as the original wire document.
func TestChallengeRoundTrip(t *testing.T) {
	for _, path := range challengeFixtures {
		t.Run(path, func(t *testing.T) {
			p, wire := fixtureChallenge(t, path)
			enc, err := json.Marshal(p)
			if err != nil {
				t.Fatal(err)
			}
			if !JSONEqual(enc, wire) {
				t.Errorf("re-encoded challenge is a different JSON value\n got %s\nwant %s", enc, wire)
			}
			again, err := ParsePaymentRequired(enc)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(p, again) {
				t.Errorf("decode(encode(decode(x))) != decode(x)\n got %+v\nwant %+v", again, p)
			}
			if p.X402Version == V2 {
				h, err := EncodeHeaderJSON(p)
				if err != nil {
					t.Fatal(err)
				}
				fromHeader, err := DecodePaymentRequiredHeader(h)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(p, fromHeader) {
					t.Errorf("header round trip changed the challenge")
				}
			}
		})
	}
}

// TestNarrowed narrows a three-option challenge (built from a real one plus two unknown-laden options) to
// each option and checks: the original is untouched, the kept entry is the same JSON as the original
// entry, and every other member (resource, extensions, unknown) survives.
func TestNarrowed(t *testing.T) {
	for _, path := range challengeFixtures {
		t.Run(path, func(t *testing.T) {
			_, wire := fixtureChallenge(t, path)
			var doc map[string]json.RawMessage
			if err := json.Unmarshal(wire, &doc); err != nil {
				t.Fatal(err)
			}
			var entries []json.RawMessage
			if err := json.Unmarshal(doc["accepts"], &entries); err != nil {
				t.Fatal(err)
			}
			amountKey := `"amount"`
			if strings.Contains(string(entries[0]), "maxAmountRequired") {
				amountKey = `"maxAmountRequired"`
			}
			second := strings.Replace(string(entries[0]), amountKey+`:"10000"`, amountKey+`:"20000","futureField":{"b":[1,2.50,"x&y<z>"],"a":null}`, 1)
			third := strings.Replace(string(entries[0]), `"scheme":"exact"`, `"scheme":"upto","tag":"\u00e9"`, 1)
			entries = append(entries, json.RawMessage(second), json.RawMessage(third))
			doc["accepts"], _ = json.Marshal(entries)
			doc["topLevelExtra"] = json.RawMessage(`{"keep":"me"}`)
			full, _ := json.Marshal(doc)

			p, err := ParsePaymentRequired(full)
			if err != nil {
				t.Fatal(err)
			}
			before, _ := json.Marshal(p)
			for i := range entries {
				n := p.Narrowed(i)
				if n == nil || len(n.Accepts) != 1 {
					t.Fatalf("Narrowed(%d) = %+v", i, n)
				}
				enc, err := json.Marshal(n)
				if err != nil {
					t.Fatal(err)
				}
				var got map[string]json.RawMessage
				if err := json.Unmarshal(enc, &got); err != nil {
					t.Fatal(err)
				}
				var gotEntries []json.RawMessage
				if err := json.Unmarshal(got["accepts"], &gotEntries); err != nil || len(gotEntries) != 1 {
					t.Fatalf("narrowed accepts = %s (%v)", got["accepts"], err)
				}
				if !JSONEqual(gotEntries[0], entries[i]) {
					t.Errorf("narrowed entry %d\n got %s\nwant %s", i, gotEntries[0], entries[i])
				}
				for k, v := range doc {
					if k != "accepts" && !JSONEqual(got[k], v) {
						t.Errorf("member %q: got %s, want %s", k, got[k], v)
					}
				}
				if len(got) != len(doc) {
					t.Errorf("narrowed challenge has %d members, want %d", len(got), len(doc))
				}
				// The narrowed entry is what a v2 client echoes as `accepted`: it must match the seller's.
				if !p.Accepts[i].Equal(n.Accepts[0]) {
					t.Errorf("narrowed entry %d does not match the original under Equal", i)
				}
				// Mutating the copy must not reach the original.
				n.Accepts[0].PayTo = "0xmutated"
				if len(n.Accepts[0].Extra) > 0 {
					n.Accepts[0].Extra[0] = 'X'
				}
				for k := range n.Unknown {
					n.Unknown[k] = json.RawMessage(`"mutated"`)
				}
				for k := range n.Extensions {
					n.Extensions[k][0] = 'X'
				}
				if n.Resource != nil {
					n.Resource.URL = "mutated"
				}
			}
			after, _ := json.Marshal(p)
			if string(before) != string(after) || len(p.Accepts) != len(entries) {
				t.Errorf("Narrowed changed the original\nbefore %s\nafter  %s", before, after)
			}
			if p.Narrowed(-1) != nil || p.Narrowed(len(entries)) != nil {
				t.Error("Narrowed out of range should be nil")
			}
		})
	}
}

func TestParsePaymentRequiredErrors(t *testing.T) {
	cases := map[string]string{
		"empty":             ``,
		"not an object":     `[1,2]`,
		"null":              `null`,
		"no version":        `{"accepts":[]}`,
		"version 3":         `{"x402Version":3,"accepts":[]}`,
		"version 0":         `{"x402Version":0,"accepts":[]}`,
		"version string":    `{"x402Version":"2","accepts":[]}`,
		"version fraction":  `{"x402Version":2.5,"accepts":[]}`,
		"version null":      `{"x402Version":null,"accepts":[]}`,
		"no accepts":        `{"x402Version":2}`,
		"accepts null":      `{"x402Version":2,"accepts":null}`,
		"accepts object":    `{"x402Version":2,"accepts":{}}`,
		"entry not object":  `{"x402Version":2,"accepts":["x"]}`,
		"amount number":     `{"x402Version":2,"accepts":[{"amount":10000}]}`,
		"v1 amount number":  `{"x402Version":1,"accepts":[{"maxAmountRequired":10000}]}`,
		"payTo null":        `{"x402Version":2,"accepts":[{"payTo":null}]}`,
		"timeout string":    `{"x402Version":2,"accepts":[{"maxTimeoutSeconds":"60"}]}`,
		"timeout fraction":  `{"x402Version":2,"accepts":[{"maxTimeoutSeconds":60.5}]}`,
		"resource string":   `{"x402Version":2,"resource":"http://x","accepts":[]}`,
		"extensions array":  `{"x402Version":2,"accepts":[],"extensions":[]}`,
		"trailing garbage":  `{"x402Version":2,"accepts":[]} x`,
		"invalid utf8":      "{\"x402Version\":2,\"accepts\":[],\"error\":\"\xff\"}",
		"too deep":          `{"x402Version":2,"accepts":[],"x":` + strings.Repeat("[", 40) + strings.Repeat("]", 40) + `}`,
		"too large":         `{"x402Version":2,"accepts":[],"x":"` + strings.Repeat("a", MaxBodyBytes) + `"}`,
		"error not string":  `{"x402Version":2,"error":1,"accepts":[]}`,
		"v1 resource array": `{"x402Version":1,"accepts":[{"resource":[]}]}`,
	}
	for name, body := range cases {
		t.Run(name, func(t *testing.T) {
			p, err := ParsePaymentRequired([]byte(body))
			if err == nil {
				t.Fatalf("got %+v, want an error", p)
			}
			if !errors.Is(err, ErrMalformed) {
				t.Errorf("error %v does not wrap ErrMalformed", err)
			}
		})
	}
}

// TestParsePaymentRequiredVersionFields: the amount is read from the member of its version, the other one
// stays unknown, and the v1-only members are only modelled in v1.
func TestParsePaymentRequiredVersionFields(t *testing.T) {
	v1, err := ParsePaymentRequired([]byte(`{"x402Version":1,"resource":"top","accepts":[{"maxAmountRequired":"5","amount":"7","resource":"http://r","outputSchema":{"a":1}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	r := v1.Accepts[0]
	if r.Amount != "5" || r.Version != V1 || string(r.Unknown["amount"]) != `"7"` || r.Resource != "http://r" || string(r.OutputSchema) != `{"a":1}` {
		t.Errorf("v1 entry = %+v", r)
	}
	if v1.Resource != nil || string(v1.Unknown["resource"]) != `"top"` {
		t.Errorf("v1 top-level resource should stay unknown: %+v", v1)
	}
	v2, err := ParsePaymentRequired([]byte(`{"x402Version":2,"accepts":[{"maxAmountRequired":"5","amount":"7","resource":{"url":"x"},"outputSchema":1}]}`))
	if err != nil {
		t.Fatal(err)
	}
	r = v2.Accepts[0]
	if r.Amount != "7" || r.Version != V2 || string(r.Unknown["maxAmountRequired"]) != `"5"` ||
		string(r.Unknown["resource"]) != `{"url":"x"}` || string(r.Unknown["outputSchema"]) != `1` {
		t.Errorf("v2 entry = %+v", r)
	}
	// SPEC's 32 options decode; a 33rd is refused while reading.
	options := func(n int) []byte {
		return []byte(`{"x402Version":2,"accepts":[` + strings.TrimSuffix(strings.Repeat(`{"amount":"1"},`, n), ",") + `]}`)
	}
	if p, err := ParsePaymentRequired(options(MaxOptions)); err != nil || len(p.Accepts) != MaxOptions {
		t.Errorf("%d options: %v", MaxOptions, err)
	}
	for _, n := range []int{MaxOptions + 1, 1000} {
		if _, err := ParsePaymentRequired(options(n)); !errors.Is(err, ErrTooManyOptions) || !errors.Is(err, ErrMalformed) {
			t.Errorf("%d options: %v, want ErrTooManyOptions", n, err)
		}
	}
	// An empty accepts array is a well-formed challenge with nothing to pay; the preflight says so.
	if p, err := ParsePaymentRequired([]byte(`{"x402Version":2,"accepts":[]}`)); err != nil || len(p.Accepts) != 0 {
		t.Errorf("empty accepts: %+v %v", p, err)
	}
}

func TestDecodePaymentRequiredHeaderWantsV2(t *testing.T) {
	h, _ := EncodeHeaderJSON(json.RawMessage(`{"x402Version":1,"accepts":[]}`))
	if _, err := DecodePaymentRequiredHeader(h); err == nil {
		t.Error("a v1 document in PAYMENT-REQUIRED should be refused")
	}
}

// TestMarshalNoHTMLEscape: like JSON.stringify, '&', '<' and '>' are written as they are.
func TestMarshalNoHTMLEscape(t *testing.T) {
	body := `{"x402Version":2,"resource":{"url":"http://x/?a=1&b=<2>"},"accepts":[]}`
	p, err := ParsePaymentRequired([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	b, err := p.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != body {
		t.Errorf("got %s, want %s", b, body)
	}
}

// TestManyEmptyOptionsAreCheap: a challenge of 15,000 empty options (a 45 KB body) is refused for the
// cost of reading 33: its allocations stay within a small multiple of the document itself. Measured in
// bytes allocated (runtime.MemStats), not time.
func TestManyEmptyOptionsAreCheap(t *testing.T) {
	body := []byte(`{"x402Version":1,"accepts":[` + strings.Repeat("{},", 14999) + `{}]}`)
	header, _ := EncodeHeaderJSON(json.RawMessage(strings.Replace(string(body), `"x402Version":1`, `"x402Version":2`, 1)))
	for name, decode := range map[string]func() error{
		"v1 body":   func() error { _, err := ParsePaymentRequired(body); return err },
		"v2 header": func() error { _, err := DecodePaymentRequiredHeader(header); return err },
	} {
		const runs = 20
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		for range runs {
			if err := decode(); !errors.Is(err, ErrTooManyOptions) {
				t.Fatalf("%s: %v, want ErrTooManyOptions", name, err)
			}
		}
		runtime.ReadMemStats(&after)
		perRun := (after.TotalAlloc - before.TotalAlloc) / runs
		// The v1 body is copied once (about 45 KB); the header is decoded (about 60 KB base64, 45 KB JSON).
		if perRun > 256<<10 {
			t.Errorf("%s: %d bytes allocated per decode, want < 256 KiB", name, perRun)
		}
		t.Logf("%s: %d bytes allocated per decode", name, perRun)
	}
}
