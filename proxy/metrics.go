package proxy

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/payguard/payguard/store"
)

// Metrics are the proxy's Prometheus metrics, on their own registry (never the global one).
type Metrics struct {
	Registry         *prometheus.Registry
	decisions        *prometheus.CounterVec
	paymentsReleased *prometheus.CounterVec
	paymentsRefused  *prometheus.CounterVec
	settlements      *prometheus.CounterVec
	latency          *prometheus.HistogramVec
	upstreamErrors   prometheus.Counter
	nonX402          prometheus.Counter
	paymentsFailed   prometheus.Counter
}

// NewMetrics makes the metrics and their registry.
func NewMetrics() *Metrics {
	m := &Metrics{
		Registry: prometheus.NewRegistry(),
		decisions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "payguard_decisions_total", Help: "Proxy decisions by stage, outcome and reason class.",
		}, []string{"stage", "outcome", "reason_class"}),
		paymentsReleased: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "payguard_payments_released_total", Help: "Payment-bearing requests forwarded to the seller, by how they were allowed.",
		}, []string{"via"}),
		paymentsRefused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "payguard_payments_refused_total", Help: "Payment-bearing requests refused before reaching the seller, by reason class.",
		}, []string{"reason_class"}),
		settlements: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "payguard_settlements_total", Help: "Settlement headers seen on released payments, by result.",
		}, []string{"result"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "payguard_decision_duration_seconds", Help: "Time from request to decision (holds include the wait).",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 5, 30, 120},
		}, []string{"stage"}),
		upstreamErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "payguard_upstream_errors_total", Help: "Upstream requests that failed before a response.",
		}),
		nonX402: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "payguard_non_x402_402_total", Help: "402 responses that carried no x402 challenge and passed unchanged.",
		}),
		paymentsFailed: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "payguard_payments_rechallenged_total", Help: "Released payments the seller answered with a fresh challenge (passed on with nothing to pay).",
		}),
	}
	m.Registry.MustRegister(m.decisions, m.paymentsReleased, m.paymentsRefused, m.settlements, m.latency,
		m.upstreamErrors, m.nonX402, m.paymentsFailed)
	return m
}

// watch adds the gauges read from the proxy's state at scrape time.
func (m *Metrics) watch(p *Proxy) {
	budget := func(pick func(store.BudgetState) int64) func() float64 {
		return func() float64 {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			st, err := p.opts.Store.State(ctx, p.opts.Budget, p.day())
			if err != nil {
				return -1
			}
			return float64(pick(st)) / 1e6
		}
	}
	m.Registry.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "payguard_usd_reserved_today", Help: "USD reserved and not yet settled today (UTC); -1 when the ledger is unavailable.",
		}, budget(func(s store.BudgetState) int64 { return s.Reserved })),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "payguard_usd_spent_today", Help: "USD settled today (UTC); -1 when the ledger is unavailable.",
		}, budget(func(s store.BudgetState) int64 { return s.Spent })),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "payguard_holds_pending", Help: "Holds waiting for a person; -1 when the store is unavailable.",
		}, func() float64 {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			hs, err := p.opts.Store.ListHolds(ctx, store.HoldPending)
			if err != nil {
				return -1
			}
			return float64(len(hs))
		}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "payguard_mitm_certificates_cached", Help: "MITM leaf certificates in the cache.",
		}, func() float64 { return float64(p.certs.Len()) }),
	)
}

// Handler serves the registry in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.Registry, promhttp.HandlerOpts{})
}

// reasonClass maps a decision's reasons to a small, bounded label: the first reason that carries the
// decision's own prefix, recognised by SPEC §5's reason texts.
func reasonClass(decision string, reasons []string) string {
	for _, r := range reasons {
		if !strings.HasPrefix(r, decision+":") {
			continue
		}
		for _, c := range reasonClasses {
			if strings.Contains(r, c.substr) {
				return c.class
			}
		}
		return "other"
	}
	return "none"
}

var reasonClasses = []struct{ substr, class string }{
	{"all rules passed", "all_rules_passed"},
	{"no payment options", "no_options"},
	{"could not determine merchant domain", "domain_unknown"},
	{"on blocklist", "blocklist"},
	{"not on allowlist", "allowlist"},
	{"OFAC", "sanctions"},
	{"domain registered", "new_domain"},
	{"no DNS", "domain_dns"},
	{"unsupported or malformed", "malformed_option"},
	{"invalid payment amount", "malformed_option"},
	{"network", "network"},
	{"not a known USDC", "asset"},
	{"could not be priced", "unpriced"},
	{"exceeds max", "max_per_payment"},
	{"above hold threshold", "hold_threshold"},
	{"daily cap", "daily_cap"},
	{"has no payTo", "no_payto"},
	{"endpoint_", "index"},
	{"invalid_index_rule", "index"},
}
