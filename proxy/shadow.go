package proxy

import (
	"context"
	"errors"
	"math"

	"github.com/payguard/payguard/store"
	"github.com/payguard/payguard/x402"
)

// Shadow (report) mode, global or per agent, is for trying rules on real traffic: every decision is made,
// signed, logged, journaled and counted as usual, but a block or a hold the rules give is not enforced. The
// payment goes on as if allowed, and every place that shows the decision says what would have happened
// ("would_block", "would_hold": the log line's "shadow", the metrics' outcome, the console, the
// X-Payguard-Shadow response header). The signed receipt keeps the real decision (block or hold): it is what
// payguard decided.
//
// The ledger stays honest: the amount of a shadowed payment is reserved and committed like any other, but
// without a cap (a would-be daily-cap block still records the spend, above the cap), on the global budget
// and the agent's own. Consequences, stated:
//   - No hold is created in report mode: nobody is asked to approve what goes through anyway.
//   - The option that goes on is the one the engine judged; if payguard cannot price it in USD (not a known
//     USDC), it is still refused, since its spend could not be recorded.
//   - Failures that never reached a decision (ledger or engine down, a malformed challenge or payment, a
//     replay) are refused as always: report mode shadows the rules, not payguard's own integrity checks.

// ShadowHeader names, on a response payguard let through in report mode, the decision it would have made.
const ShadowHeader = "X-Payguard-Shadow"

// shadow turns a block or hold of a report-mode agent into an uncapped allow of the judged option,
// reserved (and with a ticket for tk). v is returned unchanged when it is
// not to be shadowed.
func (p *Proxy) shadow(ctx context.Context, v verdict, pr *x402.PaymentRequired, day string, tk *ticketFor) verdict {
	if v.ag == nil || !v.ag.report || v.Result == nil || v.Decision == allow {
		return v
	}
	would := "would_" + v.Decision
	idx := -1
	for i := range pr.Accepts {
		if v.Judged == &pr.Accepts[i] {
			idx = i
		}
	}
	micros, priced := int64(0), false
	if idx >= 0 {
		micros, priced = usdOfUSDC(&pr.Accepts[idx])
	}
	if !priced {
		v.Reasons = append(v.Reasons, "block: report mode: the payment cannot be priced in USD, so it is refused (its spend could not be recorded)")
		v.Decision, v.Hold = block, nil
		return v
	}
	opt := pr.Accepts[idx]
	var t store.Ticket
	var err error
	if tk != nil {
		if t, err = p.newTicket(tk.method, tk.url, &opt, nil, v.Result.Receipt.ID); err != nil {
			return failClosed("store_error", "payment ticket could not be made: "+err.Error())
		}
	}
	reserve := func(budget string, t store.Ticket) (string, store.Ticket, error) {
		if tk == nil {
			id, err := p.opts.Store.Reserve(ctx, budget, day, micros, math.MaxInt64)
			return id, t, err
		}
		t, err := p.opts.Store.ReserveTicket(ctx, budget, day, micros, math.MaxInt64, t)
		return t.ReservationID, t, err
	}
	var agentRes string
	if v.ag.capMicros > 0 {
		twin := store.Ticket{ID: newID("tkt"), Key: agentTwinKey(v.Result.Receipt.ID), Option: t.Option,
			ReceiptID: v.Result.Receipt.ID, ExpiresAt: t.ExpiresAt}
		if agentRes, _, err = reserve(p.agentBudget(v.ag.id), twin); err != nil {
			return shadowFailed(err)
		}
	}
	id, _, err := reserve(p.opts.Budget, t)
	if err != nil {
		p.giveBackAgent(ctx, v, day, agentRes)
		return shadowFailed(err)
	}
	v.Shadow, v.Decision, v.Chosen, v.Option, v.Amount, v.Hold = would, allow, idx, &opt, micros, nil
	v.Release = &release{Budget: p.opts.Budget, Day: day, ReservationID: id, AmountMicros: micros,
		ReceiptID: v.Result.Receipt.ID, Option: &opt, AgentReservationID: agentRes, Via: "shadow"}
	if agentRes != "" {
		v.Release.AgentBudget = p.agentBudget(v.ag.id)
	}
	return v
}

func shadowFailed(err error) verdict {
	if errors.Is(err, store.ErrLedgerLost) {
		return failClosed("ledger_lost", "the budget ledger lost what it had recorded; no payment until an operator acts: "+err.Error())
	}
	return failClosed("ledger_error", "budget reservation failed: "+err.Error())
}

// outcome is a verdict's decision as metrics and the console show it: "would_block" or "would_hold" for a
// shadowed one.
func (v verdict) outcome() string {
	if v.Shadow != "" {
		return v.Shadow
	}
	return v.Decision
}
