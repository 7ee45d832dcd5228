package proxy

import (
	"net/http"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/payguard/payguard/internal/buildinfo"
	"github.com/payguard/payguard/policy"
	"github.com/payguard/payguard/preflight"
)

// Metrics are the proxy's Prometheus metrics, on their own registry (never the global one).
type Metrics struct {
	Registry         *prometheus.Registry
	decisions        *prometheus.CounterVec
	paymentsReleased *prometheus.CounterVec
	paymentsRefused  *prometheus.CounterVec
	settlements      *prometheus.CounterVec
	settlementAlarms *prometheus.CounterVec // settle.go
	latency          *prometheus.HistogramVec
	upstreamErrors   prometheus.Counter
	nonX402          prometheus.Counter
	paymentsFailed   prometheus.Counter
	// agentHandshakeFailures counts agents' TLS handshakes with payguard that failed (errors.go).
	agentHandshakeFailures prometheus.Counter
	indexRuleHits          *prometheus.CounterVec // log.go
	opsMetrics                                    // opsmetrics.go: agents, journal, reloads
	// The children logDecision counts every decision in, found by their labels (labelcache.go).
	decisionsBy      labelCache[prometheus.Counter]
	agentDecisionsBy labelCache[prometheus.Counter]
	latencyBy        labelCache[prometheus.Observer]
}

// NewMetrics makes the metrics and their registry.
func NewMetrics() *Metrics {
	m := &Metrics{
		Registry: prometheus.NewRegistry(),
		decisions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "payguard_decisions_total", Help: "Proxy decisions by stage, outcome and reason class.",
		}, []string{"stage", "outcome", "reason_class"}),
		paymentsReleased: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "payguard_payments_released_total", Help: "Payment-bearing requests forwarded to the seller, by how they were allowed and by scheme.",
		}, []string{"via", "scheme"}),
		paymentsRefused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "payguard_payments_refused_total", Help: "Payment-bearing requests refused before reaching the seller, by reason class.",
		}, []string{"reason_class"}),
		settlements: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "payguard_settlements_total", Help: "Settlement headers seen on released payments, by result and scheme (upto: alarm, success_amount_unknown).",
		}, []string{"result", "scheme"}),
		settlementAlarms: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "payguard_settlement_alarms_total", Help: "Settlements outside their authorization (upto above the maximum, another network, payer or recipient), by scheme; each holds the seller's next payments.",
		}, []string{"scheme"}),
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
	m.indexRuleHits = newIndexRuleHits()
	m.opsMetrics = newOpsMetrics(m.Registry)
	m.agentHandshakeFailures = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "payguard_agent_tls_handshake_failures_total", Help: "TLS handshakes with the agent that failed (usually: the agent does not trust payguard's CA).",
	})
	m.Registry.MustRegister(m.decisions, m.paymentsReleased, m.paymentsRefused, m.settlements, m.settlementAlarms, m.latency,
		m.upstreamErrors, m.nonX402, m.paymentsFailed, m.agentHandshakeFailures, m.indexRuleHits, buildinfo.NewCollector(),
		// The Go runtime's and the process's own series (go_*, process_*), as `payguard serve` exports.
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// watch adds the gauges read from the proxy's state at scrape time (stategauges.go).
func (m *Metrics) watch(p *Proxy) {
	m.Registry.MustRegister(stateCollector{p}, ruleSetCollector{p})
}

// Handler serves the registry in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.Registry, promhttp.HandlerOpts{})
}

// reasonClass maps a decision's reasons to a small, bounded label: the class of the first reason that carries
// the decision's own prefix, by its stable code (policy.Code*), never by matching reason text.
func reasonClass(res *preflight.Result) string {
	for i, r := range res.Reasons {
		if !strings.HasPrefix(r, res.Decision+":") {
			continue
		}
		if i < len(res.ReasonCodes) {
			if c, ok := classOfCode[res.ReasonCodes[i]]; ok {
				return c
			}
		}
		return "other"
	}
	return "none"
}

// classOfCode is the reason_class label of each reason code (TestEveryReasonCodeHasAClass).
var classOfCode = map[string]string{
	policy.CodeNoOptions: "no_options", policy.CodeMerchantDomainUnknown: "domain_unknown",
	policy.CodeDomainBlocklisted: "blocklist", policy.CodePayToBlocklisted: "blocklist",
	policy.CodeDomainNotAllowlisted: "allowlist", policy.CodePayToNotAllowlisted: "allowlist",
	policy.CodeNameSanctionedExact: "sanctions", policy.CodeNameSanctionedPossible: "sanctions", policy.CodePayToSanctioned: "sanctions",
	policy.CodeNewDomain: "new_domain", policy.CodeDomainNoDNS: "domain_dns",
	policy.CodeMalformedOption: "malformed_option", policy.CodeInvalidAmount: "malformed_option",
	policy.CodeNetworkNotAllowed: "network", policy.CodeAssetNotUSDC: "asset", policy.CodeUnpriced: "unpriced",
	policy.CodeAboveMaxPerPayment: "max_per_payment", policy.CodeAboveHoldThreshold: "hold_threshold",
	policy.CodeDailyCap: "daily_cap", policy.CodeNoPayTo: "no_payto", policy.CodeAllRulesPassed: "all_rules_passed",
	policy.CodeSanctionsUnavailable: "screening_unavailable", policy.CodeSanctionsFailed: "screening_unavailable",
	policy.CodeDomainCheckFailed: "screening_unavailable", policy.CodeInternalError: "internal_error",
	policy.CodeInvalidIndexRule: "index", policy.CodeEndpointPriceAboveCategoryMedian: "index",
	policy.CodeEndpointFailedLast3: "index", policy.CodeEndpointPayToChanged: "index",
	policy.CodeSchemeUnsupported: "scheme_unsupported", policy.CodeSettlementAlarm: "settlement_alarm",
	policy.CodeUnpaidTickets: "unpaid_tickets",
}
