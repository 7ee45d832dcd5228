package server

import (
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/payguard/payguard/internal/buildinfo"
)

// metrics are the API's Prometheus series, on the registry the caller passes (never the global one).
type metrics struct {
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	payments *prometheus.CounterVec
	trials   *prometheus.CounterVec

	// served caches each route and status's two series once asked for (record): WithLabelValues hashes
	// its labels and looks the series up on every call, and the status's label was a new string each time.
	mu     sync.RWMutex
	served map[servedKey]servedSeries
}

type servedKey struct {
	route  string
	status int
}

type servedSeries struct {
	requests prometheus.Counter
	latency  prometheus.Observer
}

// maxServedSeries bounds the cache (a handler may write any status); past it, record asks the vectors.
const maxServedSeries = 256

// countPayment adds one sale outcome under route (an HTTP route, or /mcp for the MCP tools); an empty
// outcome is not counted. core.Service counts through it.
func (s *Server) countPayment(route, outcome string) {
	if outcome != "" {
		s.metrics.payment(route, outcome)
	}
}

// countTrial adds one free-trial call (core.TrialGranted, TrialExhausted or TrialError).
func (s *Server) countTrial(result string) { s.metrics.trials.WithLabelValues(result).Inc() }

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "payguard_server_requests_total",
			Help: "HTTP requests by route and status code."}, []string{"route", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "payguard_server_request_seconds",
			Help:    "HTTP request latency by route.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 10, 30}}, []string{"route"}),
		payments: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "payguard_server_payments_total",
			Help: "Fee payment outcomes by route."}, []string{"route", "outcome"}),
		trials: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "payguard_server_trial_calls_total",
			Help: "Free-trial calls by result (granted, exhausted, error)."}, []string{"result"}),
		served: map[servedKey]servedSeries{},
	}
	if reg != nil {
		reg.MustRegister(m.requests, m.latency, m.payments, m.trials, buildinfo.NewCollector())
	}
	return m
}

// knownRoutes bounds the route label: anything else is "other".
var knownRoutes = map[string]bool{
	"/v1/check": true, "/v1/preflight": true, "/v1/endpoint": true, "/v1/sample": true, "/v1/rules/default": true,
	"/health": true, "/status": true, "/openapi.json": true, "/llms.txt": true, "/.well-known/x402": true,
	"/.well-known/agent-card.json": true, "/.well-known/mcp.json": true, "/.well-known/payguard-keys.json": true,
	"/terms": true, "/privacy": true, "/.well-known/security.txt": true, "/mcp": true,
}

func routeLabel(path string) string {
	if knownRoutes[path] {
		return path
	}
	return "other"
}

// record counts one served request and its latency by route (a metric, not an Endpoint Index observation).
func (m *metrics) record(path string, status int, d time.Duration) {
	s := m.servedSeries(routeLabel(path), status)
	s.requests.Inc()
	s.latency.Observe(d.Seconds())
}

// servedSeries is the route and status's series, created as WithLabelValues creates them (on first use:
// no series is exported before a request has it).
func (m *metrics) servedSeries(route string, status int) servedSeries {
	k := servedKey{route, status}
	m.mu.RLock()
	s, ok := m.served[k]
	m.mu.RUnlock()
	if ok {
		return s
	}
	s = servedSeries{m.requests.WithLabelValues(route, strconv.Itoa(status)), m.latency.WithLabelValues(route)}
	m.mu.Lock()
	if len(m.served) < maxServedSeries {
		m.served[k] = s
	}
	m.mu.Unlock()
	return s
}

func (m *metrics) payment(path, outcome string) {
	m.payments.WithLabelValues(routeLabel(path), outcome).Inc()
}
