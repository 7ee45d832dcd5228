package index

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/payguard/payguard/policy"
	"github.com/payguard/payguard/store"
	"github.com/payguard/payguard/x402"
)

// history is n observations of one endpoint as the proxy writes them (one offer, bazaar metadata on the first).
func history(n int) []store.Observation {
	obs := make([]store.Observation, n)
	for i := range obs {
		obs[i] = seen(time.Duration(i)*10*time.Minute, offer("eip155:8453", payA, "10000"))
	}
	obs[0].Metadata = []byte(`{"info":{"input":{"type":"http","method":"GET"},"output":{"example":{"t":21}}},"schema":{}}`)
	return obs
}

// BenchmarkDerive is the engine's per-decision work on an endpoint's history (decoded already).
func BenchmarkDerive(b *testing.B) {
	for _, n := range []int{16, 256} {
		obs := history(n)
		opts := []policy.Option{usdcOption(payA, 10_000)}
		now := t0.Add(time.Duration(n) * 10 * time.Minute)
		b.Run(itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				Derive(target, obs, "GET", now, 0).Facts(opts, now)
			}
		})
	}
}

// BenchmarkDecodeHistory is what reading n stored observations costs in JSON decoding alone.
func BenchmarkDecodeHistory(b *testing.B) {
	for _, n := range []int{16, 256} {
		raws := make([][]byte, n)
		for i, o := range history(n) {
			raws[i], _ = json.Marshal(o)
		}
		b.Run(itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				for _, r := range raws {
					var o store.Observation
					if err := json.Unmarshal(r, &o); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

// BenchmarkFromChallenge is the proxy hook's own work on the 402 path: the normalized URL and the
// observation (the queue send is measured in proxy's BenchmarkObserveHook).
func BenchmarkFromChallenge(b *testing.B) {
	pr := &x402.PaymentRequired{X402Version: 2, Accepts: []x402.Requirement{{Scheme: "exact", Network: "base", Amount: "10000",
		Asset: usdc, PayTo: payA}}, Extensions: map[string]json.RawMessage{"bazaar": json.RawMessage(`{"info":{"category":"weather"}}`)}}
	req, _ := http.NewRequestWithContext(context.Background(), "GET", "https://seller.example/api?city=x", nil)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		u, _ := NormalizeURL(req.URL.String())
		FromChallenge(u, req.Method, pr, t0)
	}
}

func itoa(n int) string { return utoa(uint64(n)) }
