package policy

import (
	"math"
	"math/rand/v2"
	"testing"
)

// String writes what its fmt form wrote, for amounts across the range and at its ends.
func TestUSDString(t *testing.T) {
	cases := []USD{0, 1, 9, 10, 100_000, 999_999, 1_000_000, 1_000_001, 1_500_000, 10_000, 250_000, 25 * MicrosPerUSD, -1, -1_500_000,
		math.MaxInt64, math.MinInt64, math.MinInt64 + 1, -math.MaxInt64}
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 20000; i++ {
		cases = append(cases, USD(r.Int64()), USD(r.Int64N(100_000_000)), -USD(r.Int64N(10_000_000)))
	}
	for _, u := range cases {
		if got, want := u.String(), u.stringFmt(); got != want {
			t.Fatalf("USD(%d).String() = %q, want %q", int64(u), got, want)
		}
	}
}
