package preflight

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/payguard/payguard/receipts"
)

// TestDecideJSONIsTheResultsJSON: for every decision vector (each decision, every reason, carts, v1 and v2,
// screening failed or unavailable), DecideJSON's bytes are exactly json.Marshal of the signed result, and
// verify as a whole result against the signing key.
func TestDecideJSONIsTheResultsJSON(t *testing.T) {
	keys := testKeys(t)
	jwks, err := keys.PublicJWKS()
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range buildVectorCases() {
		e, in := vectorEngine(t, keys, v)
		res, got, err := e.DecideJSON(context.Background(), in)
		if err != nil {
			t.Fatalf("%s: %v", v.Name, err)
		}
		want, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("%s: DecideJSON\n%s\njson.Marshal\n%s", v.Name, got, want)
		}
		if err := receipts.VerifyResult(got, jwks, receipts.VerifyOptions{Archival: true}); err != nil {
			t.Fatalf("%s: %v", v.Name, err)
		}
	}
}

// TestDecideJSONSellerEchoesAReceipt: a seller's free-form extra carrying a receipt object (the same id
// shape, decision and every member but the input hash, which it cannot know) does not move where the
// signature goes.
func TestDecideJSONSellerEchoesAReceipt(t *testing.T) {
	h := newHarness(t)
	extra := `{"receipt":{"id":"rcpt_00000000000000000000000000000000","ts":"2026-01-01T00:00:00Z","input_sha256":"` +
		strings.Repeat("0", 64) + `","decision":"allow"},"id":"rcpt_x"}`
	body := []byte(`{"challenge":{"x402Version":2,"resource":{"url":"https://api.example.com/data"},"accepts":[{"scheme":"exact","network":"eip155:8453","amount":"10000","asset":"0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913","payTo":"0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC","maxTimeoutSeconds":60,"extra":` + extra + `}]}}`)
	in, err := ParseInput(body)
	if err != nil {
		t.Fatal(err)
	}
	res, got, err := h.engine.DecideJSON(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(res)
	if !bytes.Equal(got, want) {
		t.Fatalf("DecideJSON\n%s\njson.Marshal\n%s", got, want)
	}
}

// TestSignedJSONRefusesToGuess: a payload with the unsigned receipt twice, or none, is not spliced (DecideJSON
// then encodes the result again).
func TestSignedJSONRefusesToGuess(t *testing.T) {
	r := Receipt{ID: "rcpt_1", TS: "2026-01-01T00:00:00Z", InputSHA256: "ab", Decision: "allow", JWS: "h.p.s"}
	u, _ := json.Marshal(Receipt{ID: r.ID, TS: r.TS, InputSHA256: r.InputSHA256, Decision: r.Decision})
	for name, payload := range map[string]string{
		"twice": `{"a":` + string(u) + `,"receipt":` + string(u) + `}`,
		"none":  `{"receipt":{}}`,
	} {
		if out, ok := signedJSON([]byte(payload), r); ok {
			t.Errorf("%s: spliced into %s", name, out)
		}
	}
	bad := r
	bad.JWS = `h.p."s`
	if out, ok := signedJSON([]byte(`{"receipt":`+string(u)+`}`), bad); ok {
		t.Errorf("a JWS JSON would escape was spliced: %s", out)
	}
	if out, ok := signedJSON([]byte(`{"receipt":`+string(u)+`,"z":1}`), r); !ok ||
		string(out) != `{"receipt":{"id":"rcpt_1","ts":"2026-01-01T00:00:00Z","input_sha256":"ab","decision":"allow","jws":"h.p.s"},"z":1}` {
		t.Errorf("spliced %s, %v", out, ok)
	}
}
