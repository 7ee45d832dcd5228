//go:build unix

package index

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/payguard/payguard/internal/benchcpu"
	"github.com/payguard/payguard/policy"
	"github.com/payguard/payguard/store"
	"github.com/payguard/payguard/store/storetest"
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
			start := benchcpu.Now()
			for i := 0; i < b.N; i++ {
				Derive(target, obs, "GET", now, 0).Facts(opts, now)
			}
			benchcpu.Report(b, start)
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
			start := benchcpu.Now()
			defer benchcpu.Report(b, start)
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

// BenchmarkObservationBytes reports the JSON bytes one stored observation takes (bolt and Redis store this
// JSON; Redis adds its own per-entry overhead) for what the proxy writes of the official x402 seller
// (@x402/express with the bazaar extension; testdata/official-402-bazaar.json was captured from
// interop/lib/seller-index.mjs), and for the largest observation the store accepts. docs/benchmarks/index.md
// turns these into the storage per endpoint per day.
func BenchmarkObservationBytes(b *testing.B) {
	raw, err := os.ReadFile("testdata/official-402-bazaar.json")
	if err != nil {
		b.Fatal(err)
	}
	pr, err := x402.ParsePaymentRequired(raw)
	if err != nil {
		b.Fatal(err)
	}
	first := FromChallenge("https://seller.example/weather", "GET", pr, t0)
	repeat := first
	repeat.Metadata = nil // the writer stores a seller's unchanged metadata once
	largest := storetest.LargestObservation(t0)
	largest.URL = "https://seller.example/" + strings.Repeat("u", store.MaxNameBytes-len("https://seller.example/"))
	for _, c := range []struct {
		name string
		o    store.Observation
	}{
		{"402_first_with_bazaar", first},
		{"402_repeat", repeat},
		{"paid", FromPaid(first.URL, "GET", first.Offers[0], 200, true, t0)},
		{"probe_failed", store.Observation{URL: first.URL, Method: "GET", ObservedAt: t0, Source: store.SourceProbe,
			Error: "dial tcp 203.0.113.7:443: connect: connection refused"}},
		{"largest_accepted", largest},
	} {
		if err := store.CheckObservation(c.o); err != nil {
			b.Fatal(c.name, err)
		}
		b.Run(c.name, func(b *testing.B) {
			var n int
			for b.Loop() {
				v, _ := json.Marshal(c.o)
				n = len(v)
			}
			b.ReportMetric(float64(n), "bytes/obs")
		})
	}
}

// BenchmarkDeriveSitePrices is deriving a full category sample (store.MaxCategoryEndpoints entries over 64
// sites) for one network and asset: what a decision pays when the Cache's category entry was just
// (re)read, at most once per TTL per category, network and asset. Every other decision only walks the
// result (BenchmarkMedianExcluding).
func BenchmarkDeriveSitePrices(b *testing.B) {
	sample := fullCategory()
	b.ReportAllocs()
	for b.Loop() {
		if s := DeriveSitePrices(sample, "eip155:8453", usdc, t0, 0); len(s) != 64 {
			b.Fatal(len(s))
		}
	}
}

func BenchmarkMedianExcluding(b *testing.B) {
	s := DeriveSitePrices(fullCategory(), "eip155:8453", usdc, t0, 0)
	b.ReportAllocs()
	for b.Loop() {
		if _, hosts := s.MedianExcluding("site7.example"); hosts != 63 {
			b.Fatal(hosts)
		}
	}
}

func fullCategory() []store.CategoryPrice {
	var sample []store.CategoryPrice
	for i := 0; i < store.MaxCategoryEndpoints; i++ {
		host := fmt.Sprintf("site%d.example", i%64)
		sample = append(sample, store.CategoryPrice{URL: fmt.Sprintf("https://%s/%d", host, i), Host: host, At: t0,
			Offers: []store.Offer{{Scheme: "exact", Network: "eip155:8453", Asset: strings.ToLower(usdc), Amount: fmt.Sprint(10000 + i)}}}) // canonical, as CategoryPriceOf writes it
	}
	return sample
}
