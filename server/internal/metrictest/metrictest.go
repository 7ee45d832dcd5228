// Package metrictest reads a Prometheus registry in the server's tests (HTTP and MCP), so a test can say
// exactly which counters an exchange moved.
package metrictest

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// Counters is every counter g gathers, keyed "name|label values..." (label values in the registry's order,
// which is by label name).
func Counters(tb testing.TB, g prometheus.Gatherer) map[string]float64 {
	tb.Helper()
	families, err := g.Gather()
	if err != nil {
		tb.Fatal(err)
	}
	got := map[string]float64{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			key := f.GetName()
			for _, l := range m.GetLabel() {
				key += "|" + l.GetValue()
			}
			if m.Counter != nil {
				got[key] = m.Counter.GetValue()
			}
		}
	}
	return got
}
