//go:build unix

package proxy

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/payguard/payguard/index"
	"github.com/payguard/payguard/internal/benchcpu"
	"github.com/payguard/payguard/store"
	"github.com/payguard/payguard/store/memory"
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
		p.observeChallengeAt(req.Method, req.URL.String(), pr)()
	}
}

// BenchmarkGuardChallengeIndex is BenchmarkGuardChallenge (one intercepted 402, in process, memory store)
// with the Endpoint Index: off (no Index at all, the proxy before it), read (the Index read for every
// decision, nothing observed: index.observe false), on (the default: observed, repeats coalesced for an
// hour, so this bench's one endpoint is written once) and every (coalesce 0s: every 402 written to the
// store, with the default retention of 256 per endpoint). cpu-ns/op is the whole process's CPU per 402, so
// it counts the writer goroutine's work off the request path too. docs/benchmarks/index.md has the figures.
func BenchmarkGuardChallengeIndex(b *testing.B) {
	keep := store.Retention{MaxPerURL: 256, MaxAge: 720 * time.Hour}
	for _, c := range []struct {
		name string
		opts func(b *testing.B, st *memory.Store) []harnessOption
	}{
		{"off", func(*testing.B, *memory.Store) []harnessOption { return nil }},
		{"read", func(b *testing.B, st *memory.Store) []harnessOption {
			cache := index.NewCache(st, 0)
			return []harnessOption{func(su *setup) { su.index, su.Index = cache, cache }}
		}},
		{"on", func(b *testing.B, st *memory.Store) []harnessOption {
			return []harnessOption{withIndexWriter(b, st, index.WriterOptions{Keep: keep, Coalesce: time.Hour})}
		}},
		{"every", func(b *testing.B, st *memory.Store) []harnessOption {
			return []harnessOption{withIndexWriter(b, st, index.WriterOptions{Keep: keep})}
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			st := memory.New()
			benchGuardChallenge(b, st, func() func() {
				start := benchcpu.Now()
				return func() { benchcpu.Report(b, start) }
			}, c.opts(b, st)...)
		})
	}
}
