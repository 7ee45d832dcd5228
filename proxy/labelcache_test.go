package proxy

import (
	"fmt"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/payguard/payguard/store/memory"
)

// A child found through the cache is the vector's own: what it counts is the series WithLabelValues
// reads, for every label values, past the cache's bound too (where children are looked up each time).
func TestLabelCacheCountsTheVectorsSeries(t *testing.T) {
	vec := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "t_total", Help: "t"}, []string{"a", "b", "c"})
	var c labelCache[prometheus.Counter]
	n := labelCacheMax + 50
	for round := 1; round <= 3; round++ {
		for i := range n {
			a, b := fmt.Sprint(i%7), fmt.Sprint(i)
			c.get(a, b, "x", func() prometheus.Counter { return vec.WithLabelValues(a, b, "x") }).Inc()
		}
		for i := range n {
			if got := counterValue(t, vec.WithLabelValues(fmt.Sprint(i%7), fmt.Sprint(i), "x")); got != float64(round) {
				t.Fatalf("round %d, series %d counts %v", round, i, got)
			}
		}
	}
	if m := c.m.Load(); m == nil || len(*m) != labelCacheMax {
		t.Fatalf("cache holds %d children, bound %d", lenOf(m), labelCacheMax)
	}
	// Label values that concatenate alike are other series.
	c.get("ab", "", "", func() prometheus.Counter { return vec.WithLabelValues("ab", "", "") }).Inc()
	c.get("a", "b", "", func() prometheus.Counter { return vec.WithLabelValues("a", "b", "") }).Inc()
	if counterValue(t, vec.WithLabelValues("ab", "", "")) != 1 || counterValue(t, vec.WithLabelValues("a", "b", "")) != 1 {
		t.Fatal("two label sets shared a child")
	}
}

// logDecision's counts land in the series the metrics endpoint shows: decisions by stage, outcome and
// class, by agent and outcome, and the latency histogram, for an allowed and a blocked 402.
func TestDecisionMetricsThroughLabelCache(t *testing.T) {
	p, _, _ := newTestProxy(t, memory.New(), memoTestRules(), maxUnpaid(1<<30))
	const url = "https://127.0.0.1:18443/402"
	for range 3 {
		guard402(p, url, normalChallenge(), "{}")
	}
	blocked := normalChallenge()
	blocked.Set("Payment-Required", "!!")
	guard402(p, url, blocked, "{}")
	m := p.metrics
	if got := counterValue(t, m.agentDecisions.WithLabelValues(DefaultAgent, allow)); got != 3 {
		t.Fatalf("agent decisions allow: %v", got)
	}
	if got := counterValue(t, m.agentDecisions.WithLabelValues(DefaultAgent, block)); got != 1 {
		t.Fatalf("agent decisions block: %v", got)
	}
	if got := counterValue(t, m.decisions.WithLabelValues("challenge", block, "challenge_malformed")); got != 1 {
		t.Fatalf("decisions block: %v", got)
	}
	if got := seriesOf(m.latency); got != 1 {
		t.Fatalf("latency series: %d", got)
	}
	// Two series: the allowed 402s' (their class) and the refused one's.
	if got := seriesOf(m.decisions); got != 2 {
		t.Fatalf("decision series: %d", got)
	}
}

// seriesOf counts a collector's series.
func seriesOf(c prometheus.Collector) int {
	ch := make(chan prometheus.Metric, 16)
	go func() { c.Collect(ch); close(ch) }()
	n := 0
	for range ch {
		n++
	}
	return n
}
