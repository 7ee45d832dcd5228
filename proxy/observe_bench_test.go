package proxy

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/payguard/payguard/index"
	"github.com/payguard/payguard/store"
	"github.com/payguard/payguard/x402"
)

// nopEndpoints accepts and forgets observations: the benchmark measures the request path, not the store.
type nopEndpoints struct{}

func (nopEndpoints) PutObservation(context.Context, store.Observation, store.Retention) error {
	return nil
}
func (nopEndpoints) Observations(context.Context, string) ([]store.Observation, error) {
	return nil, nil
}
func (nopEndpoints) IndexUpdatedAt(context.Context) (time.Time, error) { return time.Time{}, nil }

// BenchmarkObserveHook is what observation writing adds to the 402 path: the normalized URL, the
// observation of the challenge (its offers and bazaar metadata), and the non-blocking queue send to the
// writer. The store write itself happens on the writer's goroutine.
func BenchmarkObserveHook(b *testing.B) {
	w := index.NewWriter(nopEndpoints{}, index.WriterOptions{Queue: 1 << 16})
	defer w.Close()
	p := &Proxy{opts: Options{Observer: w, Now: time.Now}}
	pr := &x402.PaymentRequired{X402Version: x402.V2, Resource: &x402.ResourceInfo{URL: "https://seller.example/weather"},
		Accepts: []x402.Requirement{offer(x402.V2, "eip155:8453", baseUSDC, sellerPayTo, "10000")},
		Extensions: map[string]json.RawMessage{"bazaar": json.RawMessage(
			`{"info":{"input":{"type":"http","method":"GET","queryParams":{"city":"Lisbon"}},"output":{"example":{"t":21}}},"schema":{"type":"object"}}`)}}
	req, _ := http.NewRequest("GET", "https://seller.example/weather?city=Lisbon", nil)
	b.ReportAllocs()
	for b.Loop() {
		p.observeChallenge(req, pr)()
	}
}
