package proxy

import (
	"context"
	"errors"

	"github.com/payguard/payguard/store"
)

// An agent with its own daily cap has its own ledger budget, "<budget>/agent/<id>", beside the global one
// every agent spends from. An allowed amount is reserved in both: the agent's first, under its cap, then the
// global one, under the global cap (the sum over all agents); when the global one refuses, the agent's
// reservation is settled at zero (given back). Each reservation is atomic in its
// store (one Redis script, one bolt transaction), so neither cap is ever exceeded, whatever the interleaving
// of decisions and proxies sharing the store; the two are not one atomic step, so during the moment between
// an agent reservation and its give-back, another decision of the same agent on another proxy can be refused
// by the agent's cap for room that is about to come back: a refusal that errs toward not paying, never a
// payment over a cap.
//
// A challenge's allowed ticket reserves the agent's amount as a lease too: a twin ticket keyed by the
// decision's receipt id ("agent:<receipt>"), taken when the payment takes its ticket (pinned) and released
// with it when the 402 is never paid. Settlement settles both reservations with the same amount.

// agentBudget is the ledger budget of agent id.
func (p *Proxy) agentBudget(id string) string { return p.opts.Budget + "/agent/" + id }

func agentTwinKey(receiptID string) string { return "agent:" + receiptID }

// agentSpent is what the agent has spent and reserved today.
func (p *Proxy) agentSpent(ctx context.Context, ag *agentRules, day string) (int64, error) {
	st, err := p.opts.Store.State(ctx, p.agentBudget(ag.id), day)
	return st.Spent + st.Reserved, err
}

// rulesOf is the rule set a verdict was decided under (the active one for a verdict that names none).
func (p *Proxy) rulesOf(v verdict) *RuleSet {
	if v.rs != nil {
		return v.rs
	}
	return p.ruleSet()
}

// reserveAgent reserves v's amount under the agent's own cap, if it has one, and makes the global payment
// ticket for tk (nil: no ticket). blocked is the verdict to return instead (the agent's cap, or a failure);
// capped: it is the agent's cap's refusal.
func (p *Proxy) reserveAgent(ctx context.Context, v verdict, day string, tk *ticketFor) (agentRes string, t store.Ticket, blocked *verdict, capped bool) {
	res := v.Result
	fail := func(out verdict) (string, store.Ticket, *verdict, bool) { return "", store.Ticket{}, &out, false }
	if tk != nil {
		var err error
		if t, err = p.newTicket(tk.method, tk.url, v.Option, tk.optionJSON(v.Option), res.Receipt.ID); err != nil {
			return fail(failClosed("store_error", "payment ticket could not be made: "+err.Error()))
		}
		t.HoldID = tk.holdID
	}
	ag := v.ag
	if ag == nil || ag.capMicros <= 0 {
		return "", t, nil, false
	}
	budget := p.agentBudget(ag.id)
	var err error
	if tk == nil {
		agentRes, err = p.opts.Store.Reserve(ctx, budget, day, res.AmountMicros, ag.capMicros)
	} else {
		twin := store.Ticket{ID: newID("tkt"), Key: agentTwinKey(res.Receipt.ID), Option: t.Option,
			ReceiptID: res.Receipt.ID, ExpiresAt: t.ExpiresAt}
		twin, err = p.opts.Store.ReserveTicket(ctx, budget, day, res.AmountMicros, ag.capMicros, twin)
		agentRes = twin.ReservationID
	}
	switch {
	case errors.Is(err, store.ErrBudgetExceeded):
		spent, _ := p.agentSpent(ctx, ag, day)
		out := p.capBlock(v, ag.rules.DailyCapUSD, spent)
		out.Class = "agent_daily_cap"
		return "", store.Ticket{}, &out, true
	case errors.Is(err, store.ErrLedgerLost):
		return fail(failClosed("ledger_lost", "the agent's budget ledger lost what it had recorded; no payment until an operator acts: "+err.Error()))
	case err != nil:
		return fail(failClosed("ledger_error", "agent budget reservation failed: "+err.Error()))
	}
	return agentRes, t, nil, false
}

// giveBackAgent settles the agent's reservation at zero when the global one failed: nothing will be paid.
func (p *Proxy) giveBackAgent(ctx context.Context, v verdict, day, agentRes string) {
	if agentRes == "" || v.ag == nil {
		return
	}
	if err := p.opts.Store.Settle(ctx, p.agentBudget(v.ag.id), day, agentRes, 0); err != nil {
		// It stays reserved: the agent's cap counts it until the day ends (errs toward not paying).
		p.log.Warn("agent reservation not given back", "agent", v.ag.id, "reservation_id", agentRes, "error", err.Error())
	}
}

// takeAgentTwin pins the agent's twin reservation of a taken ticket, so that the payment's settlement
// settles it; a ticket without a twin (the agent had no cap of its own) leaves v as it is.
func (p *Proxy) takeAgentTwin(ctx context.Context, v *verdict, tk store.Ticket) {
	if v.Release == nil || tk.ReceiptID == "" {
		return
	}
	twin, err := p.opts.Store.TakeTicket(ctx, agentTwinKey(tk.ReceiptID), p.opts.Now())
	switch {
	case errors.Is(err, store.ErrNotFound):
		return
	case err != nil:
		// The global ticket is taken (its reservation stays, as for any payment refused after its ticket).
		*v = failClosed("store_error", "agent ticket store unavailable: "+err.Error())
		return
	}
	v.Release.AgentBudget, v.Release.AgentReservationID = twin.Budget, twin.ReservationID
}

// settleAgent settles the agent's reservation of a released payment with what the global one settled.
func (p *Proxy) settleAgent(ctx context.Context, r *release, spent int64) {
	if r.AgentReservationID == "" {
		return
	}
	if err := p.opts.Store.Settle(ctx, r.AgentBudget, r.Day, r.AgentReservationID, spent); err != nil {
		p.log.Error("settlement", "result", "agent_commit_error", "budget", r.AgentBudget,
			"reservation_id", r.AgentReservationID, "error", err.Error())
	}
}
