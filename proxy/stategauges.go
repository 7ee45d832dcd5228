package proxy

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/payguard/payguard/store"
)

// stateCollector exports the ledger and hold gauges, read from the store at scrape time. A figure the store
// could not give is an absent series, never a sentinel such as -1 (which a sum or a rate would take for a
// value); payguard_ledger_up says whether the ledger answered.
type stateCollector struct{ p *Proxy }

var (
	descLedgerUp = prometheus.NewDesc("payguard_ledger_up",
		"1 when the budget ledger answered this scrape, 0 when it did not (the USD gauges are then absent).", nil, nil)
	descReserved = prometheus.NewDesc("payguard_usd_reserved_today",
		"USD reserved and not yet settled today (UTC); absent when the ledger is unavailable.", nil, nil)
	descSpent = prometheus.NewDesc("payguard_usd_spent_today",
		"USD settled today (UTC); absent when the ledger is unavailable.", nil, nil)
	descHolds = prometheus.NewDesc("payguard_holds_pending",
		"Holds waiting for a person; absent when the store is unavailable.", nil, nil)
	descCerts = prometheus.NewDesc("payguard_mitm_certificates_cached", "MITM leaf certificates in the cache.", nil, nil)
)

func (stateCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descLedgerUp, descReserved, descSpent, descHolds, descCerts} {
		ch <- d
	}
}

func (c stateCollector) Collect(ch chan<- prometheus.Metric) {
	p := c.p
	gauge := func(d *prometheus.Desc, v float64) { ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v) }
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if st, err := p.opts.Store.State(ctx, p.opts.Budget, p.day()); err != nil {
		gauge(descLedgerUp, 0)
	} else {
		gauge(descLedgerUp, 1)
		gauge(descReserved, float64(st.Reserved)/1e6)
		gauge(descSpent, float64(st.Spent)/1e6)
	}
	if hs, err := p.opts.Store.ListHolds(ctx, store.HoldPending); err == nil {
		gauge(descHolds, float64(len(hs)))
	}
	gauge(descCerts, float64(p.certs.Len()))
}
