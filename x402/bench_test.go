package x402

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// headerFromFixture returns the first value of the named header in a capture file.
func headerFromFixture(b *testing.B, path, name string) string {
	b.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	var doc struct {
		Headers  [][]string `json:"headers"`
		Response struct {
			Headers [][]string `json:"headers"`
		} `json:"response"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		b.Fatal(err)
	}
	for _, h := range append(doc.Headers, doc.Response.Headers...) {
		if strings.EqualFold(h[0], name) {
			return h[1]
		}
	}
	b.Fatalf("%s: no %s header", path, name)
	return ""
}

// BenchmarkNarrowChallengeV2 is the proxy's allow path for a v2 challenge: decode the PAYMENT-REQUIRED
// header (the 3 KB offer-receipt capture), narrow it to one option, re-encode the header.
func BenchmarkNarrowChallengeV2(b *testing.B) {
	value := headerFromFixture(b, "testdata/fixtures/v2-offer-receipt/challenge-402.json", HeaderPaymentRequired)
	b.SetBytes(int64(len(value)))
	b.ReportAllocs()
	for b.Loop() {
		p, err := DecodePaymentRequiredHeader(value)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := EncodeHeaderJSON(p.Narrowed(0)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkNarrowChallengeV1 is the same for a v1 JSON body.
func BenchmarkNarrowChallengeV1(b *testing.B) {
	raw, err := os.ReadFile("testdata/fixtures/v1/challenge-402.json")
	if err != nil {
		b.Fatal(err)
	}
	var doc struct {
		Response struct {
			Body string `json:"body"`
		} `json:"response"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		b.Fatal(err)
	}
	body := []byte(doc.Response.Body)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		p, err := ParsePaymentRequired(body)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := p.Narrowed(0).MarshalJSON(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodePaymentSignature is the proxy's paying-retry path: decode PAYMENT-SIGNATURE (the 3.6 KB
// capture that echoes extensions), read the EIP-3009 authorization, compare `accepted` with the option.
func BenchmarkDecodePaymentSignature(b *testing.B) {
	value := headerFromFixture(b, "testdata/fixtures/v2-offer-receipt/paid-request.json", HeaderPaymentSignature)
	first, err := DecodePaymentPayloadHeader(value)
	if err != nil {
		b.Fatal(err)
	}
	option := *first.Accepted
	b.SetBytes(int64(len(value)))
	b.ReportAllocs()
	for b.Loop() {
		p, err := DecodePaymentPayloadHeader(value)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := p.ExactEVM(); err != nil {
			b.Fatal(err)
		}
		if !option.Equal(*p.Accepted) {
			b.Fatal("accepted does not match")
		}
	}
}

func BenchmarkParseAtomic(b *testing.B) {
	for b.Loop() {
		if _, err := ParseAtomic("1000000000000000000"); err != nil {
			b.Fatal(err)
		}
	}
}
