package proxy

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/payguard/payguard/x402"
	"github.com/payguard/payguard/x402/svm/svmtest"
)

// FuzzGuardInputs feeds arbitrary 402 headers and bodies through the challenge reader and narrowing, and
// arbitrary payment headers through the payment terms reader: none may panic, an undecodable challenge is
// never reported as not-x402 when it names x402Version, and a narrowed challenge stays readable.
func FuzzGuardInputs(f *testing.F) {
	f.Add("", []byte(`{"x402Version":1,"error":"","accepts":[{"scheme":"exact","network":"base","maxAmountRequired":"10000","asset":"0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913","payTo":"0xf54127927F219FB78C8D1A1fF3D7dc6D7f70C98E","maxTimeoutSeconds":60}]}`), "")
	f.Add("eyJ4NDAyVmVyc2lvbiI6Mn0=", []byte("{}"), "eyJ4NDAyVmVyc2lvbiI6Mn0=")
	f.Add("not base64", []byte("<html>"), "%%%")
	// Seeds from the real wire captures: the v1 challenge body, the v2 challenge header, both payments.
	v1, v2 := fixture(f, "v1/challenge-402.json"), fixture(f, "v2/challenge-402.json")
	v1pay, v2pay := fixture(f, "v1/paid-request.json"), fixture(f, "v2/paid-request.json")
	f.Add("", []byte(v1.Response.Body), fixtureHeader(v1pay.Headers, x402.HeaderXPayment))
	f.Add(fixtureHeader(v2.Response.Headers, x402.HeaderPaymentRequired), []byte(v2.Response.Body),
		fixtureHeader(v2pay.Headers, x402.HeaderPaymentSignature))
	// Solana payments the official client built (v2 and v1), so that svmTerms is fuzzed from real transactions.
	for _, c := range svmtest.Cases(f) {
		v2pl := fmt.Sprintf(`{"x402Version":2,"accepted":%s,"payload":{"transaction":%q}}`, c.Requirement, c.Transaction)
		v1pl := fmt.Sprintf(`{"x402Version":1,"scheme":"exact","network":"solana-devnet","payload":{"transaction":%q}}`, c.Transaction)
		f.Add("", []byte("{}"), base64.StdEncoding.EncodeToString([]byte(v2pl)))
		f.Add("", []byte("{}"), base64.StdEncoding.EncodeToString([]byte(v1pl)))
	}
	// An upto payment as the SDK's upto client sends it (a Permit2 witness transfer of the maximum).
	upto, _ := x402.EncodeHeaderJSON(map[string]any{"x402Version": 2,
		"accepted": uptoOffer("200000"),
		"payload": map[string]any{"signature": "0x00", "permit2Authorization": map[string]any{
			"from": buyerAddress, "permitted": map[string]any{"token": baseSepoliaUSDC, "amount": "200000"},
			"spender": x402.UptoPermit2ProxyAddress, "nonce": "1", "deadline": "9999999999",
			"witness": map[string]any{"to": sellerPayTo, "facilitator": uptoFacilitator, "validAfter": "0"}}}})
	f.Add("", []byte("{}"), upto)
	f.Fuzz(func(t *testing.T, header string, body []byte, payment string) {
		resp := &http.Response{StatusCode: 402, Header: http.Header{}, Body: io.NopCloser(bytes.NewReader(body))}
		if header != "" {
			resp.Header.Set(x402.HeaderPaymentRequired, header)
		}
		pr, _, raw, src, _ := readChallenge(resp, nil)
		if src == notX402 && header == "" && len(body) <= maxChallengeBody && hasX402Version(body) {
			t.Fatalf("body with x402Version passed as not x402: %q", body)
		}
		if (src == fromHeader || src == fromBody) && len(pr.Accepts) > 0 {
			if err := narrowResponse(resp, pr, nil, 0, raw, src, &headerValues{}); err == nil && src == fromBody {
				out, _ := io.ReadAll(resp.Body)
				if _, err := x402.ParsePaymentRequired(out); err != nil {
					t.Fatalf("narrowed body unreadable: %v: %s", err, out)
				}
			}
		}
		if pl, err := x402.DecodePaymentPayloadHeader(payment); err == nil {
			if tm, err := paymentTerms(pl); err == nil && tm.permit2 != nil {
				_ = checkPermit2Window(tm.permit2, 60, time.Unix(1_800_000_000, 0))
			}
		}
	})
}

// capture is the part of a fixture file (x402/testdata/fixtures, copied from the SDK captures) used here.
type capture struct {
	Headers  [][2]string `json:"headers"`
	Response struct {
		Headers [][2]string `json:"headers"`
		Body    string      `json:"body"`
	} `json:"response"`
}

func fixture(f *testing.F, name string) capture {
	b, err := os.ReadFile("../x402/testdata/fixtures/" + name)
	if err != nil {
		f.Fatal(err)
	}
	var c capture
	if err := json.Unmarshal(b, &c); err != nil {
		f.Fatalf("%s: %v", name, err)
	}
	return c
}

func fixtureHeader(h [][2]string, name string) string {
	for _, kv := range h {
		if http.CanonicalHeaderKey(kv[0]) == http.CanonicalHeaderKey(name) {
			return kv[1]
		}
	}
	return ""
}

// The fuzz seeds are real challenges and payments (a seed that silently failed to load would fuzz nothing).
func TestFixtureSeedsDecode(t *testing.T) {
	for _, c := range []struct{ file, header string }{
		{"v2/challenge-402.json", x402.HeaderPaymentRequired},
	} {
		b, err := os.ReadFile("../x402/testdata/fixtures/" + c.file)
		if err != nil {
			t.Fatal(err)
		}
		var cp capture
		if err := json.Unmarshal(b, &cp); err != nil {
			t.Fatal(err)
		}
		if _, err := x402.DecodePaymentRequiredHeader(fixtureHeader(cp.Response.Headers, c.header)); err != nil {
			t.Errorf("%s: %v", c.file, err)
		}
	}
	for _, c := range []struct{ file, header string }{
		{"v1/paid-request.json", x402.HeaderXPayment},
		{"v2/paid-request.json", x402.HeaderPaymentSignature},
	} {
		b, _ := os.ReadFile("../x402/testdata/fixtures/" + c.file)
		var cp capture
		json.Unmarshal(b, &cp)
		pl, err := x402.DecodePaymentPayloadHeader(fixtureHeader(cp.Headers, c.header))
		if err != nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		if _, err := paymentTerms(pl); err != nil {
			t.Errorf("%s: real SDK payment rejected: %v", c.file, err)
		}
	}
	b, _ := os.ReadFile("../x402/testdata/fixtures/v1/challenge-402.json")
	var cp capture
	json.Unmarshal(b, &cp)
	if _, err := x402.ParsePaymentRequired([]byte(cp.Response.Body)); err != nil {
		t.Errorf("v1 challenge body: %v", err)
	}
}
