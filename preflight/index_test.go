package preflight

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/payguard/payguard/store"
	"github.com/payguard/payguard/store/memory"
)

type failingIndex struct{}

func (failingIndex) Observations(context.Context, string) ([]store.Observation, error) {
	return nil, errors.New("redis: connection refused")
}

func oneOption(payTo, amount string) []byte {
	return []byte(`{"challenge":{"x402Version":2,"resource":{"url":"https://api.shop.example/v1/data?q=1"},"accepts":[` +
		v2Option(amount, payTo) + `]}}`)
}

// The engine reads the Index (not policy), keyed by the normalized resource URL, and states what it used in
// index_evidence; with no observations, or an Index it cannot read, the rules have no evidence and say nothing.
func TestEngineIndexEvidence(t *testing.T) {
	h := newHarness(t)
	st := memory.New()
	h.engine.opts.Index, h.engine.opts.IndexMaxAge = st, 30*24*time.Hour

	res := h.decide(t, oneOption(payC, "10000"))
	wantDecision(t, res, "allow", "allow: all rules passed")
	if ev := res.IndexEvidence; ev == nil || ev.Status != IndexNoObservations || ev.URL != "https://api.shop.example/v1/data" || ev.DataAsOf != DataUnknown {
		t.Fatalf("no observations: %+v", res.IndexEvidence)
	}

	seenAt := testNow.Add(-time.Hour)
	if err := st.PutObservation(context.Background(), store.Observation{URL: "https://api.shop.example/v1/data", Method: "GET",
		ObservedAt: seenAt, Status: 402, Usable: true, Source: store.SourceChallenge,
		Offers: []store.Offer{{Scheme: "exact", Network: "eip155:8453", Asset: baseUSDC, Amount: "10000", PayTo: payA}}}, store.Retention{}); err != nil {
		t.Fatal(err)
	}
	res = h.decide(t, oneOption(payC, "10000"))
	wantDecision(t, res, "hold", "hold: endpoint_payto_changed: payTo "+payC+" differs from "+strings.ToLower(payA)+
		" offered for eip155:8453/"+baseUSDC+" at 2026-11-22T07:00:00Z")
	ev := res.IndexEvidence
	if ev == nil || ev.Status != IndexObserved || ev.Observations != 1 || ev.DataAsOf != "2026-11-22T07:00:00Z" ||
		ev.PayTo == nil || ev.PayTo.Latest[0] != strings.ToLower(payA) || ev.Price == nil || ev.Price.MedianUSD != "0.01" {
		t.Fatalf("evidence: %+v", ev)
	}
	// The evidence is signed with the rest of the result.
	var signed map[string]any
	if err := json.Unmarshal([]byte(mustPayload(t, res.Receipt.JWS)), &signed); err != nil || signed["index_evidence"] == nil {
		t.Fatalf("index_evidence not in the signed payload: %v", err)
	}

	h.engine.opts.Index = failingIndex{}
	res = h.decide(t, oneOption(payC, "10000"))
	wantDecision(t, res, "allow", "allow: all rules passed")
	if ev := res.IndexEvidence; ev == nil || ev.Status != IndexUnavailable || !strings.Contains(ev.Note, "connection refused") {
		t.Fatalf("unreadable Index: %+v", res.IndexEvidence)
	}
}

// mustPayload is the JWS payload as text.
func mustPayload(t *testing.T, jws string) string {
	t.Helper()
	parts := strings.Split(jws, ".")
	if len(parts) != 3 {
		t.Fatalf("not a compact JWS: %q", jws)
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The price median's basis is the category the challenge declares once at least three other sites are in its
// sample (index_evidence names the basis, the hosts and the median), else the endpoint's own history.
func TestEngineCategoryMedianEvidence(t *testing.T) {
	h := newHarness(t)
	st := memory.New()
	h.engine.opts.Index, h.engine.opts.IndexMaxAge = st, 30*24*time.Hour
	in := func(amount string) []byte {
		return []byte(`{"challenge":{"x402Version":2,"resource":{"url":"https://api.shop.example/v1/data"},"accepts":[` +
			v2Option(amount, payC) + `],"extensions":{"bazaar":{"info":{"category":"Weather"}}}}}`)
	}
	put := func(host, amount string) {
		t.Helper()
		if err := st.PutCategoryPrice(context.Background(), "weather", store.CategoryPrice{URL: "https://" + host + "/w", Host: host,
			At: testNow.Add(-time.Hour), Offers: []store.Offer{{Scheme: "exact", Network: "eip155:8453", Asset: baseUSDC, Amount: amount}}},
			store.Retention{}); err != nil {
			t.Fatal(err)
		}
	}
	put("a.example", "10000")
	put("b.example", "10000")
	put("shop.example", "1") // the judged endpoint's own site: left out
	res := h.decide(t, in("100000"))
	wantDecision(t, res, "allow", "allow: all rules passed") // two other sites: too few, and no own history
	if ev := res.IndexEvidence; ev == nil || ev.Price != nil {
		t.Fatalf("two other sites: %+v", ev)
	}
	put("c.example", "20000")
	res = h.decide(t, in("100000"))
	wantDecision(t, res, "hold", "hold: endpoint_price_above_category_median: $0.1 is more than 5x the median $0.01 (category weather, 3 other hosts)")
	if p := res.IndexEvidence.Price; p == nil || p.Basis != "category" || p.Category != "weather" || p.Samples != 3 || p.CategoryHosts != 3 || p.MedianUSD != "0.01" {
		t.Fatalf("category evidence: %+v", p)
	}
}

// observationsOnly is an Index with neither optional capability (index.CategoryReader, index.SitePayeeReader).
type observationsOnly struct{ IndexReader }

// Options.Index's optional capabilities, with and without: the category sample decides max_price_multiple
// only through an Index that is an index.CategoryReader; without it the endpoint's own history (none here)
// is the basis, and nothing is held on a category the engine cannot read.
func TestEngineIndexCategoryCapability(t *testing.T) {
	st := memory.New()
	for _, host := range []string{"a.example", "b.example", "c.example"} {
		if err := st.PutCategoryPrice(context.Background(), "weather", store.CategoryPrice{URL: "https://" + host + "/w", Host: host,
			At: testNow.Add(-time.Hour), Offers: []store.Offer{{Scheme: "exact", Network: "eip155:8453", Asset: baseUSDC, Amount: "10000"}}},
			store.Retention{}); err != nil {
			t.Fatal(err)
		}
	}
	in := []byte(`{"challenge":{"x402Version":2,"resource":{"url":"https://api.shop.example/v1/data"},"accepts":[` +
		v2Option("100000", payC) + `],"extensions":{"bazaar":{"info":{"category":"weather"}}}}}`)
	h := newHarness(t)
	h.engine.opts.Index, h.engine.opts.IndexMaxAge = st, 30*24*time.Hour
	wantDecision(t, h.decide(t, in), "hold", "hold: endpoint_price_above_category_median: $0.1 is more than 5x the median $0.01 (category weather, 3 other hosts)")
	h.engine.opts.Index = observationsOnly{st}
	res := h.decide(t, in)
	wantDecision(t, res, "allow", "allow: all rules passed")
	if ev := res.IndexEvidence; ev == nil || ev.Price != nil {
		t.Fatalf("without index.CategoryReader: %+v", ev)
	}
}
