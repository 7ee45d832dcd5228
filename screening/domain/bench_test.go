package domain

import (
	"context"
	"testing"
)

// BenchmarkFactsCached measures Facts for a domain whose RDAP and DNS answers are cached: normalization
// (IDNA, public suffix) plus three cache hits.
func BenchmarkFactsCached(b *testing.B) {
	env := newBenchEnv(b)
	ctx := context.Background()
	env.c.Facts(ctx, "https://www.example.com/pay")
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if f := env.c.Facts(ctx, "https://www.example.com/pay"); f.AgeDays == nil {
			b.Fatal("age unknown")
		}
	}
	if env.rdap.Requests("example.com") != 1 {
		b.Fatalf("not served from the cache: %d RDAP requests", env.rdap.Requests("example.com"))
	}
}

// BenchmarkFactsCachedParallel is the same with all cores asking at once (cache lock contention).
func BenchmarkFactsCachedParallel(b *testing.B) {
	env := newBenchEnv(b)
	ctx := context.Background()
	env.c.Facts(ctx, "google.com")
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			env.c.Facts(ctx, "google.com")
		}
	})
}

// BenchmarkNormalize measures reading a URL as a merchant domain.
func BenchmarkNormalize(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Normalize("https://Shop.Example.co.uk:443/x"); err != nil {
			b.Fatal(err)
		}
	}
}
