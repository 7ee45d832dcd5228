package proxy

import (
	"context"
	"net/http"
	"net/url"

	"github.com/payguard/payguard/proxy/view"
	"github.com/payguard/payguard/store"
	"github.com/payguard/payguard/x402"
)

// The proxy's side of its admin listener: the methods of proxy/admin's Core, the few things only the
// running proxy can do for the approval API, the guard API and the console. The handlers themselves live in
// proxy/admin, which the composition (internal/app) builds over a *Proxy; this package never imports it.

// Agent authenticates the agent h's Proxy-Authorization names, as for a proxied request (agents.go); a
// refusal is counted.
func (p *Proxy) Agent(h http.Header) (string, error) {
	ag, ok := p.ruleSet().authenticate(h)
	if !ok {
		p.metrics.agentRefused.Inc()
		return "", view.ErrUnauthenticated
	}
	return ag.id, nil
}

// DecideForGuard is the decision for an in-process guard (POST /v1/decide; proxy/admin/guard.go): decided
// as an intercepted 402 for agent on the same ledger, with url (what the agent requested, never the
// challenge's claim) the only source of the merchant domain. An allow reserves without a payment ticket (the
// guard pays the seller itself); a hold waits for a person up to hold_wait, and an approved one is released
// once, reserved the same way.
func (p *Proxy) DecideForGuard(ctx context.Context, agent, method, rawURL string, pr *x402.PaymentRequired) view.GuardDecision {
	ctx = withAgent(ctx, agent)
	v := p.decide(ctx, method, rawURL, pr, false)
	if v.Decision == hold && v.Result != nil {
		v = p.resolveHoldFor(ctx, method, rawURL, pr, v, nil)
	}
	out := view.GuardDecision{Decision: v.Decision, Reasons: v.Reasons, AmountMicros: v.Amount, ReceiptID: v.receiptID(), Shadow: v.Shadow}
	switch {
	case v.Decision == hold && v.Result != nil:
		out.AmountMicros = v.Result.AmountMicros // the amount a person approves (and the approval reserves)
	case v.Decision != allow:
		out.AmountMicros = 0
	}
	if v.Hold != nil && v.Decision == hold {
		out.HoldID = v.Hold.ID
	}
	if v.Result != nil && v.Result.Receipt.JWS != "" {
		out.Result = v.Result
	}
	// The console's last decisions show the guard's too, beside the intercepted ones (stage "guard").
	if u, err := url.Parse(rawURL); err == nil {
		var amount string
		if v.Result != nil && v.Result.ChosenOption != nil {
			amount = usdString(v.Result.AmountMicros)
		}
		p.recordDecision("guard", &http.Request{Method: method, URL: u}, v, amount, pr.Accepts[0].PayTo, out.HoldID)
	}
	p.log.Info("guard decision", "decision", out.Decision, "reasons", out.Reasons, "url", rawURL,
		"amount_usd", usdString(out.AmountMicros), "hold_id", out.HoldID, "receipt_id", out.ReceiptID)
	return out
}

// ResolveHold is the one way a hold is approved or denied (the approval API and the console, through
// proxy/admin, which has checked the name and note): an expired hold is refused, the store's transition
// decides races, and waiting requests and the notifier are woken.
func (p *Proxy) ResolveHold(ctx context.Context, id, status, by, note string) (store.Hold, error) {
	cur, err := p.opts.Store.GetHold(ctx, id)
	if err != nil {
		return store.Hold{}, err
	}
	if cur.Status == store.HoldPending && !p.opts.Now().Before(cur.ExpiresAt) {
		return store.Hold{}, view.ErrHoldExpired
	}
	h, err := p.opts.Store.ResolveHold(ctx, id, status, by, note, p.opts.Now())
	if err != nil {
		return store.Hold{}, err
	}
	p.waiters.notify(id)
	p.holdChanged()
	p.log.Info("hold resolved", "hold_id", id, "status", status, "by", by, "note", note)
	return h, nil
}

// Budget is today's ledger of the proxy's budget and its daily cap.
func (p *Proxy) Budget(ctx context.Context) (view.Budget, error) {
	day := p.day()
	st, err := p.opts.Store.State(ctx, p.opts.Budget, day)
	if err != nil {
		return view.Budget{}, err
	}
	return view.NewBudget(p.opts.Budget, day, st, int64(p.opts.Rules.DailyCapUSD)), nil
}

// StoreReady is nil when the store is healthy and the ledger can be read: a journal that cannot be written
// or a wiped ledger refuses every payment, so the proxy is not ready while it lasts.
func (p *Proxy) StoreReady(ctx context.Context) error {
	if err := store.Healthy(ctx, p.opts.Store); err != nil {
		return err
	}
	_, err := p.opts.Store.State(ctx, p.opts.Budget, p.day())
	return err
}

// ModeStatus describes report mode when the active rule set has it on (shadow.go); nil otherwise.
func (p *Proxy) ModeStatus() any {
	if m := p.ruleSet().ModeStatus(); m != nil {
		return m
	}
	return nil
}

// Alarms are the settlement alarms in force (alarms.go).
func (p *Proxy) Alarms(ctx context.Context) ([]store.Alarm, error) {
	return p.alarms.ListAlarms(ctx, p.opts.Now())
}

// ClearAlarm lifts the settlement alarm on host's seller site (any name of the site, or the site as Alarms
// lists it: read as the alarm is keyed, alarmSite) and returns the site; store.ErrNotFound when none.
func (p *Proxy) ClearAlarm(ctx context.Context, host string) (string, error) {
	site := alarmSite(host)
	if site == "" {
		return "", store.ErrNotFound
	}
	if err := p.alarms.ClearAlarm(ctx, site, p.opts.Now()); err != nil {
		return "", err
	}
	return site, nil
}

// RecentDecisions are this process's last decisions, newest first (approvals.go).
func (p *Proxy) RecentDecisions() []view.Decision { return p.recent.list() }
