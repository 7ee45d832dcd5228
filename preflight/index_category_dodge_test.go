package preflight

import (
	"context"
	"testing"
	"time"

	"github.com/payguard/payguard/store"
	"github.com/payguard/payguard/store/memory"
)

// A seller's declared category must not relax the comparison its own history already makes. The endpoint
// was seen three times at $0.01; it now asks $0.20 (20x its history) and declares a category whose other
// sites charge $0.50 (one the seller picked, or seeded with three sites of its own). The category median
// alone would allow it; the endpoint's own, lower median still holds it, and index_evidence names it.
func TestEngineCategoryDoesNotRelaxOwnHistory(t *testing.T) {
	h := newHarness(t)
	st := memory.New()
	h.engine.opts.Index, h.engine.opts.IndexMaxAge = st, 30*24*time.Hour
	ctx := context.Background()
	for i := 1; i <= 3; i++ {
		if err := st.PutObservation(ctx, store.Observation{URL: "https://api.shop.example/v1/data", Method: "GET",
			ObservedAt: testNow.Add(-time.Duration(i) * time.Hour), Status: 402, Usable: true, Source: store.SourceChallenge,
			Offers: []store.Offer{{Scheme: "exact", Network: "eip155:8453", Asset: baseUSDC, Amount: "10000", PayTo: payC}}},
			store.Retention{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, host := range []string{"a.example", "b.example", "c.example"} {
		if err := st.PutCategoryPrice(ctx, "premium", store.CategoryPrice{URL: "https://" + host + "/p", Host: host,
			At: testNow.Add(-time.Hour), Offers: []store.Offer{{Scheme: "exact", Network: "eip155:8453", Asset: baseUSDC, Amount: "500000"}}},
			store.Retention{}); err != nil {
			t.Fatal(err)
		}
	}
	res := h.decide(t, []byte(`{"challenge":{"x402Version":2,"resource":{"url":"https://api.shop.example/v1/data"},"accepts":[`+
		v2Option("200000", payC)+`],"extensions":{"bazaar":{"info":{"category":"premium"}}}}}`))
	wantDecision(t, res, "hold", "hold: endpoint_price_above_category_median: $0.2 is more than 5x the median $0.01 (own_history, 3 samples)")
	if p := res.IndexEvidence.Price; p == nil || p.Basis != "own_history" || p.Category != "premium" || p.CategoryHosts != 3 {
		t.Fatalf("evidence: %+v", p)
	}

	// At a price within 5x of its own history the category (whose median is higher) changes nothing.
	res = h.decide(t, []byte(`{"challenge":{"x402Version":2,"resource":{"url":"https://api.shop.example/v1/data"},"accepts":[`+
		v2Option("20000", payC)+`],"extensions":{"bazaar":{"info":{"category":"premium"}}}}}`))
	wantDecision(t, res, "allow", "allow: all rules passed")
}
