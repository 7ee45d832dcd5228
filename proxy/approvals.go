package proxy

import (
	"context"
	"net/http"
	"sync"

	"github.com/payguard/payguard/policy"
	"github.com/payguard/payguard/proxy/view"
)

// holdChanged tells the notifier (if any) that a hold was written; it must not block.
func (p *Proxy) holdChanged() {
	if f := p.opts.OnHoldChange; f != nil {
		f()
	}
}

// recentDecisions keeps the last decisions this process made, for the console. A fleet's members each
// show their own.
type recentDecisions struct {
	mu   sync.Mutex
	ring []view.Decision
	next int
	full bool
}

const recentSize = 50

func (r *recentDecisions) add(d view.Decision) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ring == nil {
		r.ring = make([]view.Decision, recentSize)
	}
	r.ring[r.next] = d
	r.next = (r.next + 1) % recentSize
	r.full = r.full || r.next == 0
}

// list is newest first.
func (r *recentDecisions) list() []view.Decision {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := r.next
	if r.full {
		n = recentSize
	}
	out := make([]view.Decision, 0, n)
	for i := 1; i <= n; i++ {
		out = append(out, r.ring[(r.next-i+recentSize)%recentSize])
	}
	return out
}

func (p *Proxy) recordDecision(stage string, req *http.Request, v verdict, amount, payTo, holdID string) {
	scheme := ""
	if o := v.Option; o != nil {
		scheme = o.Scheme
	} else if j := v.Judged; j != nil {
		scheme = j.Scheme
	}
	scheme = clipScheme(scheme)
	agent := v.Agent
	if agent == "" {
		agent = agentIDOf(req.Context())
	}
	p.recent.add(view.Decision{At: p.opts.Now().UTC(), Stage: stage, Agent: agent, Decision: v.outcome(), Class: v.Class, Reasons: v.Reasons,
		Method: req.Method, Host: req.URL.Host, Path: req.URL.Path, AmountUSD: amount, PayTo: payTo,
		HoldID: holdID, ReceiptID: v.receiptID(), Scheme: scheme})
}

// recordSettledRow shows a released payment's settlement in the console: its scheme, what was authorized
// and settled, and what the ledger counted.
func (p *Proxy) recordSettledRow(r *release, scheme, result, authorized, settledAtomic string, spent int64) {
	d := view.Decision{At: p.opts.Now().UTC(), Stage: "settlement", Decision: "settled", Class: result,
		Host: r.Host, AmountUSD: usdString(spent), ReceiptID: r.ReceiptID, Scheme: scheme,
		Authorized: authorized, Settled: settledAtomic, Reasons: []string{}}
	if r.Option != nil {
		d.PayTo = r.Option.PayTo
	}
	if result == "alarm" {
		d.Decision = "alarm"
		if x, err := p.alarms.Alarm(context.Background(), r.Host, p.opts.Now()); err == nil {
			d.Reasons = []string{policy.SettlementAlarmReason(r.Host, x.What).String()}
		}
	}
	p.recent.add(d)
}
