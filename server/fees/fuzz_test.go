package fees

import (
	"encoding/base64"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
)

// FuzzPaymentHeader feeds arbitrary PAYMENT-SIGNATURE / X-PAYMENT values to the decoder: it must never panic,
// and whatever it accepts must be a v1 or v2 payload with a payload object and a stable nonce key.
func FuzzPaymentHeader(f *testing.F) {
	for _, seed := range []string{
		`{"x402Version":2,"accepted":{"scheme":"exact","network":"eip155:84532","amount":"10000","asset":"0x036CbD53842c5426634e7929541eC2318f3dCF7e","payTo":"0xf54127927F219FB78C8D1A1fF3D7dc6D7f70C98E","maxTimeoutSeconds":60,"extra":{"name":"USDC","version":"2"}},"payload":{"signature":"0x00","authorization":{"from":"0x01","to":"0x02","value":"10000","validAfter":"0","validBefore":"9","nonce":"0x03"}}}`,
		`{"x402Version":1,"scheme":"exact","network":"base-sepolia","payload":{"signature":"0x00","authorization":{"nonce":"0x04"}}}`,
		`{"x402Version":2,"accepted":null,"payload":{}}`,
		`{}`, `[]`, `null`,
	} {
		f.Add(base64.StdEncoding.EncodeToString([]byte(seed)), true)
		f.Add(seed, false)
	}
	f.Fuzz(func(t *testing.T, value string, v2 bool) {
		r := httptest.NewRequest("GET", "/v1/check", nil)
		if v2 {
			r.Header.Set(HeaderPaymentSignature, value)
		} else {
			r.Header.Set(HeaderXPayment, value)
		}
		p, err := PaymentFromRequest(r)
		if err != nil {
			if _, ok := err.(*PaymentError); !ok {
				t.Fatalf("error of type %T: %v", err, err)
			}
			return
		}
		if p == nil {
			if value != "" {
				t.Fatalf("a header %q read as no payment", value)
			}
			return
		}
		if p.Version != 1 && p.Version != 2 || !json.Valid(p.Raw) {
			t.Fatalf("accepted a bad payment: %+v", p)
		}
		// Every accepted payment has a never-settle-twice key of one of the three shapes, in lower case.
		key := p.NonceKey("eip155:8453")
		if key != strings.ToLower(key) || !(strings.HasPrefix(key, "x402-nonce:eip155:8453|") ||
			strings.HasPrefix(key, "x402-permit2:eip155:8453|") || strings.HasPrefix(key, "x402-payload:")) {
			t.Fatalf("payment %+v has nonce key %q", p, key)
		}
	})
}
