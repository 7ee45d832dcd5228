package policy

import (
	"math"
	"math/rand/v2"
	"testing"
)

// aboveMultiple decides most comparisons in floating point: it must answer what the exact comparison
// answers, at the limit itself (a price one micro-dollar either side of multiple × median), far from it, and
// for multiples and amounts at the ends of their ranges.
func TestAboveMultipleIsExact(t *testing.T) {
	multiples := []float64{5, 1, 0.5, 1.1, 2.5, 3.3333333333333335, 0.1, 1e-9, 5e-324, math.SmallestNonzeroFloat64 * 3, 1e9, 1e18, 1e300,
		math.MaxFloat64, math.Nextafter(5, 6), math.Nextafter(5, 4), 1.0000000001}
	medians := []USD{1, 2, 3, 7, 10_000, 9_999, 1_000_000, 333_333_333, 1 << 40, 1<<53 + 1, 1 << 62, math.MaxInt64}
	type pair struct {
		m   float64
		med USD
	}
	var pairs []pair
	for _, m := range multiples {
		for _, med := range medians {
			pairs = append(pairs, pair{m, med})
		}
	}
	r := rand.New(rand.NewPCG(5, 36))
	for i := 0; i < 3000; i++ {
		m := r.Float64() * 10
		if i%2 == 1 {
			m = math.Exp(r.Float64()*80 - 40)
		}
		med := USD(r.Int64N(100_000) + 1)
		if i%3 == 0 {
			med = USD(r.Int64N(1<<50) + 1)
		}
		pairs = append(pairs, pair{m, med})
	}
	checked := 0
	for _, pr := range pairs {
		m, med := pr.m, pr.med
		limit := m * float64(med)
		var prices []USD
		for _, base := range []float64{limit, limit * (1 + 1e-9), limit * (1 - 1e-9), limit * 2, limit / 2} {
			if base >= 0 && base < math.MaxInt64/2 {
				b := USD(base)
				prices = append(prices, b-2, b-1, b, b+1, b+2)
			}
		}
		prices = append(prices, 0, 1, math.MaxInt64, -1)
		for _, p := range prices {
			if got, want := aboveMultiple(p, med, m), aboveMultipleExact(p, med, m); got != want {
				t.Fatalf("aboveMultiple(%d, %d, %v) = %v, exactly %v", p, med, m, got, want)
			}
			checked++
		}
	}
	if checked < 50_000 {
		t.Fatalf("only %d comparisons checked", checked)
	}
	if n := testing.AllocsPerRun(100, func() { aboveMultiple(10_000, 10_000, 5) }); n != 0 {
		t.Fatalf("a price far from the limit allocates %v times", n)
	}
}
