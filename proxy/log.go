package proxy

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/payguard/payguard/internal/logout"
	"github.com/payguard/payguard/policy"
)

// logDecision writes the one canonical log line for a decision and counts it (its metrics). It is not an
// Endpoint Index observation: those are observe.go's (observeChallengeAt, observePaid).
func (p *Proxy) logDecision(stage string, req *http.Request, v verdict, start time.Time) {
	latency := p.opts.Now().Sub(start)
	m := p.metrics
	m.decisionsBy.get(stage, v.Decision, v.Class, func() prometheus.Counter {
		return m.decisions.WithLabelValues(stage, v.Decision, v.Class)
	}).Inc()
	agent := v.Agent
	if agent == "" {
		agent = agentIDOf(req.Context())
	}
	label, outcome := p.ruleSet().label(agent), v.outcome()
	m.agentDecisionsBy.get(label, outcome, "", func() prometheus.Counter {
		return m.agentDecisions.WithLabelValues(label, outcome)
	}).Inc()
	m.latencyBy.get(stage, "", "", func() prometheus.Observer { return m.latency.WithLabelValues(stage) }).Observe(latency.Seconds())
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
	if !p.log.Enabled(context.Background(), slog.LevelInfo) {
		return
	}
	l := decisionLine{stage: stage, decision: v.Decision, agent: agent, shadow: v.Shadow, reasons: v.Reasons,
		class: v.Class, method: req.Method, host: req.URL.Host, path: req.URL.Path, amount: amount, payTo: payTo,
		atomic: atomic, network: network, scheme: clipScheme(scheme), receipt: v.receiptID(), holdID: holdID,
		latencyMs: float64(latency.Microseconds()) / 1000}
	// The app's handler takes the line encoded by hand (logline.go): the same bytes as below.
	if lw, ok := p.log.Handler().(logout.LineWriter); ok && writeDecisionLine(lw, time.Now(), &l) {
		return
	}
	var attrs [decisionFields]slog.Attr // on the stack: LogAttrs copies them
	p.log.LogAttrs(context.Background(), slog.LevelInfo, "decision", decisionAttrs(&attrs, &l)...)
}

// decisionFields is how many fields a decision line has after time, level and msg.
const decisionFields = 17

// decisionAttrs are the decision line's attributes as slog gets them: the one list of its fields, in their
// order (appendDecisionLine writes the same; TestDecisionLineAsSlogWritesIt compares the two).
func decisionAttrs(dst *[decisionFields]slog.Attr, l *decisionLine) []slog.Attr {
	*dst = [decisionFields]slog.Attr{
		slog.String("stage", l.stage),
		slog.String("decision", l.decision),
		slog.String("agent", l.agent),
		slog.String("shadow", l.shadow), // shadow.go: "would_block" / "would_hold" when report mode let it through
		slog.Any("reasons", l.reasons),
		slog.String("reason_class", l.class),
		slog.String("method", l.method),
		slog.String("host", l.host),
		slog.String("path", l.path),
		slog.String("amount_usd", l.amount),
		slog.String("pay_to", l.payTo),
		slog.String("amount_atomic", l.atomic),
		slog.String("network", l.network),
		slog.String("scheme", l.scheme),
		slog.String("receipt_id", l.receipt),
		slog.String("hold_id", l.holdID),
		slog.Float64("latency_ms", l.latencyMs),
	}
	return dst[:]
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
