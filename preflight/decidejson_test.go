package preflight

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
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
	// Both ways DecideJSON signs: into its answer (a Signer that appends: the key set) and with Sign alone.
	for _, signer := range []Signer{keys, signOnly{keys}} {
		for _, v := range buildVectorCases() {
			e, in := vectorEngine(t, signer, v)
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
			if _, _, err := receipts.Verify(res.Receipt.JWS, jwks, receipts.VerifyOptions{Archival: true}); err != nil {
				t.Fatalf("%s: the result's own JWS: %v", v.Name, err)
			}
		}
	}
}

// signOnly hides the key set's AppendSign: a Signer with Sign alone.
type signOnly struct{ s Signer }

func (s signOnly) Sign(payload []byte) (string, error) { return s.s.Sign(payload) }

// failingAppender is a Signer that appends, and fails.
type failingAppender struct{ signOnly }

func (failingAppender) AppendSign(dst, _ []byte) ([]byte, error) { return dst, receipts.ErrNoSigner }
func (failingAppender) JWSLen(int) int                           { return 100 }

// A signer that fails gives no result and no JSON, on both paths: ErrSigningUnavailable (503, nothing
// charged), never an unsigned answer.
func TestDecideJSONSigningFails(t *testing.T) {
	for _, signer := range []Signer{failingAppender{}, signOnly{&receipts.KeySet{}}} {
		e, in := vectorEngine(t, signer, buildVectorCases()[0])
		res, out, err := e.DecideJSON(context.Background(), in)
		if !errors.Is(err, receipts.ErrSigningUnavailable) || res != nil || out != nil {
			t.Fatalf("%T: %v, %v, %s", signer, err, res, out)
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

// unsignedReceiptJSON is json.Marshal of the receipt without its jws whenever it says ok, and says not ok for
// every string encoding/json would write otherwise than as it is (signedJSON then refuses, and DecideJSON
// encodes the result again).
func TestUnsignedReceiptJSONIsMarshal(t *testing.T) {
	plain := Receipt{ID: "rcpt_0123456789abcdef0123456789abcdef", TS: "2026-11-27T15:30:00Z",
		InputSHA256: strings.Repeat("ab", 32), Decision: "allow", JWS: "ignored.x.y"}
	want, _ := json.Marshal(Receipt{ID: plain.ID, TS: plain.TS, InputSHA256: plain.InputSHA256, Decision: plain.Decision})
	if got, ok := unsignedReceiptJSON(nil, plain); !ok || string(got) != string(want) {
		t.Fatalf("got %s, %v; want %s", got, ok, want)
	}
	if got, ok := unsignedReceiptJSON(nil, Receipt{}); !ok || string(got) != `{"id":"","ts":"","input_sha256":"","decision":""}` {
		t.Fatalf("empty receipt: %s, %v", got, ok)
	}
	for c := range 256 {
		for field := range 4 {
			r := plain
			v := "x" + string(rune(c)) + "y"
			if c >= 0x80 {
				v = "x" + string([]byte{byte(c)}) + "y" // a lone byte, invalid UTF-8
			}
			switch field {
			case 0:
				r.ID = v
			case 1:
				r.TS = v
			case 2:
				r.InputSHA256 = v
			case 3:
				r.Decision = v
			}
			r.JWS = ""
			m, _ := json.Marshal(r)
			got, ok := unsignedReceiptJSON(nil, r)
			if ok && string(got) != string(m) {
				t.Fatalf("byte %#x in field %d: wrote %s, json.Marshal %s", c, field, got, m)
			}
			if !ok && bytes.Contains(m, []byte(v)) && c < 0x80 && c != 0x7f {
				t.Fatalf("byte %#x in field %d: refused a string JSON writes as it is", c, field)
			}
		}
	}
}
