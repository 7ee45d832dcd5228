package proxy

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/payguard/payguard/policy"
)

// logDecision writes the one canonical log line for a decision and counts it (its metrics). It is not an
// Endpoint Index observation: those are observe.go's (observeChallenge, observePaid).
func (p *Proxy) logDecision(stage string, req *http.Request, v verdict, start time.Time) {
	latency := p.opts.Now().Sub(start)
	p.metrics.decisions.WithLabelValues(stage, v.Decision, v.Class).Inc()
	agent := v.Agent
	if agent == "" {
		agent = agentIDOf(req.Context())
	}
	p.metrics.agentDecisions.WithLabelValues(p.ruleSet().label(agent), v.outcome()).Inc()
	p.metrics.latency.WithLabelValues(stage).Observe(latency.Seconds())
	if v.Result != nil {
		p.countIndexRules(v.Result.ReasonCodes)
	}
	var amount, payTo, holdID string
	// The amount is the chosen option's; a block that chose none has no amount to log (not "0").
	if v.Result != nil && v.Result.ChosenOption != nil {
		amount = usdString(v.Result.AmountMicros)
	} else if v.Amount != 0 {
		amount = usdString(v.Amount)
	}
	if v.Option != nil {
		payTo = v.Option.PayTo
	}
	// A refusal chose no option: log the one it judged, so the line says what amount to whom was refused.
	var atomic, network, scheme string
	if o := v.Option; o != nil { // an allowed or held option (a payment matched to its ticket has no Judged)
		atomic, network, scheme = o.Amount, o.Network, o.Scheme
	}
	if j := v.Judged; j != nil {
		atomic, network, scheme = j.Amount, j.Network, j.Scheme
		if payTo == "" {
			payTo = j.PayTo
		}
		if amount == "" {
			if micros, ok := usdOfUSDC(j); ok {
				amount = usdString(micros)
			}
		}
	}
	if v.Hold != nil {
		holdID = v.Hold.ID
	}
	p.recordDecision(stage, req, v, amount, payTo, holdID)
	// LogAttrs, not Info's key-value list: the same line without boxing each value (issue 36's profile).
	p.log.LogAttrs(context.Background(), slog.LevelInfo, "decision",
		slog.String("stage", stage),
		slog.String("decision", v.Decision),
		slog.String("agent", agent),
		slog.String("shadow", v.Shadow), // shadow.go: "would_block" / "would_hold" when report mode let it through
		slog.Any("reasons", v.Reasons),
		slog.String("reason_class", v.Class),
		slog.String("method", req.Method),
		slog.String("host", req.URL.Host),
		slog.String("path", req.URL.Path),
		slog.String("amount_usd", amount),
		slog.String("pay_to", payTo),
		slog.String("amount_atomic", atomic),
		slog.String("network", network),
		slog.String("scheme", clipScheme(scheme)),
		slog.String("receipt_id", v.receiptID()),
		slog.String("hold_id", holdID),
		slog.Float64("latency_ms", float64(latency.Microseconds())/1000),
	)
}

func usdString(micros int64) string { return policy.USD(micros).String() }

// clipScheme bounds a seller's scheme name in a log line (the engine refuses any it does not know).
func clipScheme(s string) string {
	if len(s) > 40 {
		return s[:40]
	}
	return s
}

// indexRules are SPEC's Index reasons (by code) and the rule each names.
var indexRules = []struct{ code, rule string }{
	{policy.CodeEndpointPayToChanged, "hold_on_payto_change"},
	{policy.CodeEndpointPriceAboveCategoryMedian, "max_price_multiple"},
	{policy.CodeEndpointFailedLast3, "require_live"},
	{policy.CodeInvalidIndexRule, "invalid_index_rule"},
}

func newIndexRuleHits() *prometheus.CounterVec {
	v := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "payguard_index_rule_hits_total",
		Help: "Decisions in which an Endpoint Index rule fired, by rule (a decision may count under several)."}, []string{"rule"})
	for _, r := range indexRules {
		v.WithLabelValues(r.rule)
	}
	return v
}

// countIndexRules counts every Index rule among a decision's reason codes.
func (p *Proxy) countIndexRules(codes []string) {
	for _, c := range codes {
		for _, ir := range indexRules {
			if c == ir.code {
				p.metrics.indexRuleHits.WithLabelValues(ir.rule).Inc()
			}
		}
	}
}
