package server

import (
	"errors"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/payguard/payguard/internal/buildinfo"
	"github.com/payguard/payguard/server/fees"
)

// metrics are the API's Prometheus series, on the registry the caller passes (never the global one).
type metrics struct {
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	payments *prometheus.CounterVec
	trials   *prometheus.CounterVec
}

// Payment outcomes counted in payguard_server_payments_total, by the HTTP routes and by the MCP server
// (whose tools' sales are counted under the route /mcp).
const (
	PayChallenged  = "challenged"              // 402 without a usable payment
	PayInvalid     = "invalid"                 // rejected before or by /verify
	PaySettled     = "settled"                 // 200 with the settlement header
	PaySettleFail  = "settle_failed"           // facilitator said success:false
	PayUnknown     = "settlement_unknown"      // settlement_outcome_unknown
	PayUnavailable = "facilitator_unavailable" // 503, nothing settled
	PayNotDone     = "work_failed"             // verified, the work failed, nothing settled
)

// Free-trial results counted in payguard_server_trial_calls_total.
const (
	TrialGranted   = "granted"
	TrialExhausted = "exhausted"
	TrialError     = "error"
)

// PaymentFailureOutcome is the outcome of an error from fees.Seller's Begin or Charge.Settle; "" for an
// error outside the seller's kinds (an internal error, not counted).
func PaymentFailureOutcome(err error) string {
	var perr *fees.PaymentError
	var failed *fees.SettleFailedError
	var unknown *fees.OutcomeUnknownError
	switch {
	case errors.As(err, &perr):
		return PayInvalid
	case errors.As(err, &failed):
		return PaySettleFail
	case errors.As(err, &unknown):
		return PayUnknown
	case errors.Is(err, fees.ErrSigningUnavailable):
		return PayNotDone
	case errors.Is(err, fees.ErrFacilitatorUnavailable):
		return PayUnavailable
	}
	return ""
}

// TrialResult is the counted result of one trial.Gate.Take.
func TrialResult(ok bool, err error) string {
	switch {
	case err != nil:
		return TrialError
	case ok:
		return TrialGranted
	}
	return TrialExhausted
}

// CountPayment adds one sale outcome under route (an HTTP route, or /mcp for the MCP tools); an empty
// outcome is not counted.
func (s *Server) CountPayment(route, outcome string) {
	if outcome != "" {
		s.metrics.payment(route, outcome)
	}
}

// CountTrial adds one free-trial call (TrialGranted, TrialExhausted or TrialError).
func (s *Server) CountTrial(result string) { s.metrics.trials.WithLabelValues(result).Inc() }

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

func (m *metrics) observe(path string, status int, d time.Duration) {
	route := routeLabel(path)
	m.requests.WithLabelValues(route, strconv.Itoa(status)).Inc()
	m.latency.WithLabelValues(route).Observe(d.Seconds())
}

func (m *metrics) payment(path, outcome string) {
	m.payments.WithLabelValues(routeLabel(path), outcome).Inc()
}
