//go:build unix

package preflight

import (
	"context"
	"testing"

	"github.com/payguard/payguard/internal/benchcpu"
)

// BenchmarkDecide: a v2 challenge with four options, default rules, in-memory screening fakes, receipt
// signing (ES256) included. The input is parsed once, outside the loop.
func BenchmarkDecide(b *testing.B) {
	h := newHarness(b)
	in, err := ParseInput(fourOptionInput(""))
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	start := benchcpu.Now()
	for b.Loop() {
		res, err := h.engine.Decide(ctx, in)
		if err != nil || res.Decision != "allow" {
			b.Fatalf("%v %v", err, res)
		}
	}
	benchcpu.Report(b, start)
}

// BenchmarkParseInput: the same input's bounded parse (limits, x402 decode, member checks).
func BenchmarkParseInput(b *testing.B) {
	body := fourOptionInput("")
	b.ReportAllocs()
	start := benchcpu.Now()
	for b.Loop() {
		if _, err := ParseInput(body); err != nil {
			b.Fatal(err)
		}
	}
	benchcpu.Report(b, start)
}

// BenchmarkSignOnly is the ES256 signature of a result-sized payload, to show its share of Decide.
func BenchmarkSignOnly(b *testing.B) {
	k := testKeys(b)
	payload := make([]byte, 1500)
	for i := range payload {
		payload[i] = 'a'
	}
	b.ReportAllocs()
	start := benchcpu.Now()
	for b.Loop() {
		if _, err := k.Sign(payload); err != nil {
			b.Fatal(err)
		}
	}
	benchcpu.Report(b, start)
}
