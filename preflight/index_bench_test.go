//go:build unix

package preflight

import (
	"context"
	"testing"
	"time"

	"github.com/payguard/payguard/index"
	"github.com/payguard/payguard/internal/benchcpu"
	"github.com/payguard/payguard/store"
	"github.com/payguard/payguard/store/memory"
)

// BenchmarkDecideWithIndex is BenchmarkDecide with the Endpoint Index on: the endpoint has a week of
// history as the proxy writes it by default (one observation an hour, coalesced: 168), read through the
// warm index.Cache as the proxy reads it. The difference from BenchmarkDecide is the Index rules' cost per
// decision.
func BenchmarkDecideWithIndex(b *testing.B) {
	h := newHarness(b)
	st := memory.New()
	for i := 0; i < 168; i++ {
		o := store.Observation{URL: "https://api.shop.example/v1/data", Method: "GET", ObservedAt: testNow.Add(-time.Duration(i) * time.Hour),
			Status: 402, Usable: true, Source: store.SourceChallenge}
		for _, p := range []string{payA, payB, payC, payD} {
			o.Offers = append(o.Offers, store.Offer{Scheme: "exact", Network: "eip155:8453", Asset: baseUSDC, Amount: "10000", PayTo: p})
		}
		if err := st.PutObservation(context.Background(), o, store.Retention{}); err != nil {
			b.Fatal(err)
		}
	}
	h.engine.opts.Index, h.engine.opts.IndexMaxAge = index.NewCache(st, time.Hour), 30*24*time.Hour
	in, err := ParseInput(fourOptionInput(""))
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	start := benchcpu.Now()
	for b.Loop() {
		res, err := h.engine.Decide(ctx, in)
		if err != nil || res.Decision != "allow" || res.IndexEvidence == nil || res.IndexEvidence.Observations != 168 {
			b.Fatalf("%v %+v", err, res)
		}
	}
	benchcpu.Report(b, start)
}
