package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/payguard/payguard/policy"
	"github.com/payguard/payguard/store"
	"github.com/payguard/payguard/x402"
)

// holdPoll is how often a waiting request re-reads its hold from the store, for approvals made by another
// process sharing the store; approvals through this process's API wake it at once.
const holdPoll = 500 * time.Millisecond

// resolveHold handles a hold decision for a challenge: an approved, unused hold for the same request is
// released once as allow; otherwise a pending hold is created (or joined) and the request waits up to
// hold_wait for a person. Only a hold can be overridden by an approval: the engine ran first, so a block
// (blocklist, sanctions, caps) never reaches here.
func (p *Proxy) resolveHold(ctx context.Context, method, url string, pr *x402.PaymentRequired, v verdict) verdict {
	return p.resolveHoldFor(ctx, method, url, pr, v, &ticketFor{method: method, url: url})
}

// resolveHoldFor is resolveHold with the ticket an approved hold's payment is released on; nil reserves
// without a ticket (an in-process guard pays the seller itself, so no retry passes the proxy: see proxy/admin/guard.go).
func (p *Proxy) resolveHoldFor(ctx context.Context, method, url string, pr *x402.PaymentRequired, v verdict, tk *ticketFor) verdict {
	key := holdKey(method, url, v, pr)
	now := p.opts.Now()
	existing, err := p.opts.Store.FindHold(ctx, key)
	switch {
	case err == nil && existing.Status == store.HoldApproved && now.Before(existing.ExpiresAt):
		return p.releaseApproved(ctx, existing, v, tk)
	case err == nil && existing.Status == store.HoldPending && now.Before(existing.ExpiresAt):
		return p.waitForPerson(ctx, existing, v, tk)
	case err != nil && !errors.Is(err, store.ErrNotFound):
		return failClosed("store_error", "hold store unavailable: "+err.Error())
	}
	decision, _ := json.Marshal(v.Result)
	h := store.Hold{
		ID: newID("hold"), Status: store.HoldPending, Key: key, Method: method, URL: url,
		Decision: decision, AmountMicros: v.Result.AmountMicros, CreatedAt: now,
		ExpiresAt: now.Add(p.opts.HoldTTL), Description: heldDescription(pr, v), Agent: v.Agent,
	}
	if err := p.opts.Store.CreateHold(ctx, h); err != nil {
		return failClosed("store_error", "hold could not be recorded: "+err.Error())
	}
	p.holdChanged()
	p.log.Info("hold created", "hold_id", h.ID, "method", method, "url", url,
		"amount_usd", usdString(h.AmountMicros), "reasons", v.Reasons)
	return p.waitForPerson(ctx, h, v, tk)
}

// waitForPerson waits for the hold to be resolved, up to hold_wait or until the agent goes away.
func (p *Proxy) waitForPerson(ctx context.Context, h store.Hold, v verdict, tk *ticketFor) verdict {
	v.Hold = &h
	if p.opts.HoldWait > 0 {
		wake, stop := p.waiters.subscribe(h.ID)
		defer stop()
		deadline := time.NewTimer(p.opts.HoldWait)
		defer deadline.Stop()
		tick := time.NewTicker(holdPoll)
		defer tick.Stop()
	wait:
		for h.Status == store.HoldPending {
			select {
			case <-wake:
			case <-tick.C:
			case <-deadline.C:
				break wait
			case <-ctx.Done():
				break wait
			}
			cur, err := p.opts.Store.GetHold(ctx, h.ID)
			if err == nil {
				h = cur
			}
		}
	}
	v.Hold = &h
	switch h.Status {
	case store.HoldApproved:
		return p.releaseApproved(ctx, h, v, tk)
	case store.HoldDenied:
		v.Decision = block
		v.Class = "hold_denied"
		return v
	default:
		v.Decision = hold
		v.Class = "hold_pending"
		return v
	}
}

// releaseApproved lets an approved hold's challenge go on: it reserves the amount with a payment ticket for
// tk bound to the hold (tk nil: an in-process guard's decision, which spends the approval itself); the daily
// cap still applies. The approval is spent by the payment (checkPayment
// uses the hold when it takes the ticket), not here: a request whose agent gave up while it waited (a MITM'd
// request is not cancelled when its agent goes) may be handed this challenge, and the agent's retry must
// still find the approval. Each released challenge reserves its amount; one that is never paid stays
// reserved like any abandoned challenge, and only one payment can spend the approval. An approval the cap
// would refuse is kept (until it expires) rather than spent on a payment that never goes.
func (p *Proxy) releaseApproved(ctx context.Context, h store.Hold, v verdict, tk *ticketFor) verdict {
	day := p.day()
	st, err := p.opts.Store.State(ctx, p.opts.Budget, day)
	if err != nil {
		return failClosed("ledger_error", "budget ledger unavailable: "+err.Error())
	}
	// The ledger's reservation checks the cap atomically; this early look only spares the store a write
	// the cap would refuse.
	if spent := st.Spent + st.Reserved; v.Result != nil && policy.OverDailyCap(policy.USD(v.Result.AmountMicros), policy.USD(spent), p.rulesOf(v).rules.DailyCapUSD) {
		v.Hold = &h
		return p.capBlock(v, p.rulesOf(v).rules.DailyCapUSD, spent)
	}
	var bound *ticketFor
	if tk != nil {
		bound = &ticketFor{method: tk.method, url: tk.url, holdID: h.ID}
	}
	out, _ := p.reserve(ctx, v, day, bound)
	if out.Decision == allow && tk == nil {
		// An in-process guard's decision (proxy/admin/guard.go): the guard pays the seller itself, so no payment
		// passes here to spend the approval; this decision spends it, once, after the reservation, so that
		// an approval the cap refuses is kept. Should another decision have spent it first, the
		// reservation goes back and the request is held again.
		used, err := p.opts.Store.UseHold(ctx, h.ID)
		if err != nil {
			p.giveBack(ctx, out.Release)
			v.Hold = &h
			if !errors.Is(err, store.ErrAlreadyUsed) && !errors.Is(err, store.ErrConflict) {
				return failClosed("store_error", "approved hold could not be used: "+err.Error())
			}
			v.Decision, v.Class = hold, "hold_pending" // someone else spent it first: held again
			return v
		}
		h = used
	}
	if out.Decision == allow {
		out.Class = "hold_approved"
	}
	out.Hold = &h
	return out
}

// giveBack settles a reservation nothing will be paid against at zero, the agent's own with it.
func (p *Proxy) giveBack(ctx context.Context, r *release) {
	if r == nil {
		return
	}
	if err := p.opts.Store.Settle(ctx, r.Budget, r.Day, r.ReservationID, 0); err != nil {
		// It stays reserved until the day ends: errs toward not paying.
		p.log.Warn("reservation not given back", "reservation_id", r.ReservationID, "error", err.Error())
	}
	p.settleAgent(ctx, r, 0)
}

// holdWaiters wakes requests waiting on a hold when this process's admin API resolves it.
type holdWaiters struct {
	mu   sync.Mutex
	subs map[string]map[chan struct{}]struct{}
}

func newHoldWaiters() *holdWaiters {
	return &holdWaiters{subs: map[string]map[chan struct{}]struct{}{}}
}

func (w *holdWaiters) subscribe(id string) (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	w.mu.Lock()
	if w.subs[id] == nil {
		w.subs[id] = map[chan struct{}]struct{}{}
	}
	w.subs[id][ch] = struct{}{}
	w.mu.Unlock()
	return ch, func() {
		w.mu.Lock()
		delete(w.subs[id], ch)
		if len(w.subs[id]) == 0 {
			delete(w.subs, id)
		}
		w.mu.Unlock()
	}
}

func (w *holdWaiters) notify(id string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for ch := range w.subs[id] {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// spendApproval uses the approved hold a ticket is bound to, once its payment matched the ticket: the first
// payment spends the approval, any other (a second ticket released on the same approval) is refused before
// the seller. An approval that expired before its payment came is refused too.
func (p *Proxy) spendApproval(ctx context.Context, tk store.Ticket, v verdict) verdict {
	if tk.HoldID == "" || v.Decision != allow {
		return v
	}
	used, err := p.opts.Store.UseHold(ctx, tk.HoldID)
	switch {
	case errors.Is(err, store.ErrAlreadyUsed):
		return failClosed("hold_used", "the approval for this payment was already used by another payment")
	case errors.Is(err, store.ErrConflict):
		return failClosed("hold_expired", "the approval for this payment expired before the payment came")
	case err != nil:
		return failClosed("store_error", "approved hold could not be used: "+err.Error())
	}
	v.Hold = &used
	p.holdChanged()
	p.log.Info("hold used", "hold_id", used.ID, "reservation_id", tk.ReservationID)
	return v
}

// maxHoldDescription bounds the seller's description kept with a hold.
const maxHoldDescription = 1024

// heldDescription is what the seller says the held payment is for: the v2 challenge's resource.description
// (where v2 sellers put it; the options carry none), else the held option's v1 description. It is shown to
// the approver as text, bounded, never as markup.
func heldDescription(pr *x402.PaymentRequired, v verdict) string {
	d := ""
	if pr != nil && pr.Resource != nil {
		d = pr.Resource.Description
	}
	if d == "" && v.Result != nil && v.Result.ChosenOption != nil {
		d = v.Result.ChosenOption.Description
	}
	if len(d) > maxHoldDescription {
		cut := maxHoldDescription
		for cut > 0 && !utf8.RuneStart(d[cut]) {
			cut--
		}
		d = d[:cut] + "…"
	}
	return d
}
