package proxy

import (
	"context"
	"sort"
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
	// The per-agent gauges cover the configured agents with a daily cap of their own (agents.list), so their
	// cardinality is the operator's list, never the traffic's.
	descAgentSpent = prometheus.NewDesc("payguard_agent_usd_spent_today",
		"USD settled today (UTC) by an agent with its own daily cap; absent when the ledger is unavailable.", []string{"agent"}, nil)
	descAgentReserved = prometheus.NewDesc("payguard_agent_usd_reserved_today",
		"USD reserved and not yet settled today (UTC) by an agent with its own daily cap.", []string{"agent"}, nil)
	descAgentCap = prometheus.NewDesc("payguard_agent_usd_cap",
		"An agent's own daily cap in USD (the global cap still binds the sum).", []string{"agent"}, nil)
)

func (stateCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descLedgerUp, descReserved, descSpent, descHolds, descCerts,
		descAgentSpent, descAgentReserved, descAgentCap} {
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
	if rs := p.ruleSet(); rs != nil {
		for _, id := range sortedAgentIDs(rs.agents) {
			ag := rs.agents[id]
			if ag.capMicros <= 0 {
				continue
			}
			label := func(d *prometheus.Desc, v float64) {
				ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, id)
			}
			label(descAgentCap, float64(ag.capMicros)/1e6)
			if st, err := p.opts.Store.State(ctx, p.agentBudget(id), p.day()); err == nil {
				label(descAgentSpent, float64(st.Spent)/1e6)
				label(descAgentReserved, float64(st.Reserved)/1e6)
			}
		}
	}
}

// sortedAgentIDs lists agents' ids in order, so a scrape reads the ledger in a stable order.
func sortedAgentIDs(agents map[string]*agentRules) []string {
	ids := make([]string, 0, len(agents))
	for id := range agents {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}
