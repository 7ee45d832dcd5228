//go:build unix

package preflight

import (
	"bytes"
	"context"
	"fmt"
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
	benchDecideWithIndex(b, false)
}

// BenchmarkDecideWithCategory adds the category median: the challenge declares a category whose sample is
// full (store.MaxCategoryEndpoints entries over 64 sites), read through the same warm cache. The difference
// from BenchmarkDecideWithIndex is the category median's cost per decision.
func BenchmarkDecideWithCategory(b *testing.B) {
	benchDecideWithIndex(b, true)
}

func benchDecideWithIndex(b *testing.B, category bool) {
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
	raw := fourOptionInput("")
	if category {
		for i := 0; i < store.MaxCategoryEndpoints; i++ {
			host := fmt.Sprintf("site%d.example", i%64)
			p := store.CategoryPrice{URL: fmt.Sprintf("https://%s/%d", host, i), Host: host, At: testNow.Add(-time.Duration(i) * time.Minute),
				Offers: []store.Offer{{Scheme: "exact", Network: "eip155:8453", Asset: baseUSDC, Amount: "10000"}}}
			if err := st.PutCategoryPrice(context.Background(), "weather", p, store.Retention{}); err != nil {
				b.Fatal(err)
			}
		}
		raw = bytes.Replace(raw, []byte(`]}}`), []byte(`],"extensions":{"bazaar":{"info":{"category":"weather"}}}}}`), 1)
	}
	in, err := ParseInput(raw)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	start := benchcpu.Now()
	for b.Loop() {
		res, err := h.engine.Decide(ctx, in)
		if err != nil || res.Decision != "allow" || res.IndexEvidence == nil || res.IndexEvidence.Observations != 168 ||
			category != (res.IndexEvidence.Price != nil && res.IndexEvidence.Price.Basis == "category") {
			b.Fatalf("%v %+v", err, res)
		}
	}
	benchcpu.Report(b, start)
}
