package proxy

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/payguard/payguard/policy"
	"github.com/payguard/payguard/proxy/console"
	"github.com/payguard/payguard/proxy/notify"
	"github.com/payguard/payguard/store"
)

// resolveError is a refused resolution, as the approval API and the console report it.
type resolveError struct {
	status        int
	code, message string
}

// resolve is the one way a person approves or denies a hold, for the API and the console alike: the name
// and note are checked, an expired hold is refused, the store's transition decides races, and waiting
// requests and the notifier are woken.
func (p *Proxy) resolve(ctx context.Context, id, status, by, note string) (store.Hold, *resolveError) {
	by = strings.TrimSpace(by)
	if !visibleName(by) || len(by) > 256 || len(note) > 2048 || !utf8.ValidString(note) {
		return store.Hold{}, &resolveError{http.StatusBadRequest, "invalid_request", "`by` is required (at most 256 bytes of valid UTF-8, visible characters, no control or format characters), `note` at most 2048 bytes of valid UTF-8"}
	}
	cur, err := p.opts.Store.GetHold(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return store.Hold{}, &resolveError{http.StatusNotFound, "not_found", "no hold with that id"}
	}
	if err != nil {
		return store.Hold{}, &resolveError{http.StatusServiceUnavailable, "store_unavailable", err.Error()}
	}
	if cur.Status == store.HoldPending && !p.opts.Now().Before(cur.ExpiresAt) {
		return store.Hold{}, &resolveError{http.StatusConflict, "expired", "the hold has expired"}
	}
	h, err := p.opts.Store.ResolveHold(ctx, id, status, by, note, p.opts.Now())
	switch {
	case errors.Is(err, store.ErrNotFound):
		return store.Hold{}, &resolveError{http.StatusNotFound, "not_found", "no hold with that id"}
	case errors.Is(err, store.ErrConflict):
		return store.Hold{}, &resolveError{http.StatusConflict, "conflict", "the hold is no longer pending"}
	case err != nil:
		return store.Hold{}, &resolveError{http.StatusServiceUnavailable, "store_unavailable", err.Error()}
	}
	p.waiters.notify(id)
	p.holdChanged()
	p.log.Info("hold resolved", "hold_id", id, "status", status, "by", by, "note", note)
	return h, nil
}

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
	ring []console.Decision
	next int
	full bool
}

const recentSize = 50

func (r *recentDecisions) add(d console.Decision) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ring == nil {
		r.ring = make([]console.Decision, recentSize)
	}
	r.ring[r.next] = d
	r.next = (r.next + 1) % recentSize
	r.full = r.full || r.next == 0
}

// list is newest first.
func (r *recentDecisions) list() []console.Decision {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := r.next
	if r.full {
		n = recentSize
	}
	out := make([]console.Decision, 0, n)
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
	p.recent.add(console.Decision{At: p.opts.Now().UTC(), Stage: stage, Agent: agent, Decision: v.outcome(), Class: v.Class, Reasons: v.Reasons,
		Method: req.Method, Host: req.URL.Host, Path: req.URL.Path, AmountUSD: amount, PayTo: payTo,
		HoldID: holdID, ReceiptID: v.receiptID(), Scheme: scheme})
}

// recordSettledRow shows a released payment's settlement in the console: its scheme, what was authorized
// and settled, and what the ledger counted.
func (p *Proxy) recordSettledRow(r *release, scheme, result, authorized, settledAtomic string, spent int64) {
	d := console.Decision{At: p.opts.Now().UTC(), Stage: "settlement", Decision: "settled", Class: result,
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

// consoleBackend is the console's view of the proxy: the store's holds, today's budget, the last decisions
// and the shared resolve.
type consoleBackend struct{ p *Proxy }

// consoleHistory bounds the resolved holds the console lists.
const consoleHistory = 100

func (b consoleBackend) Holds(ctx context.Context) ([]notify.Hold, error) {
	hs, err := b.p.opts.Store.ListHolds(ctx, "")
	if err != nil {
		return nil, err
	}
	now := b.p.opts.Now()
	var pending, done []notify.Hold
	for i := len(hs) - 1; i >= 0; i-- { // newest first
		v := notify.HoldOf(hs[i], now)
		if v.Status == store.HoldPending {
			pending = append(pending, v)
		} else if len(done) < consoleHistory {
			done = append(done, v)
		}
	}
	return append(pending, done...), nil
}

func (b consoleBackend) Budget(ctx context.Context) (notify.Budget, error) {
	day := b.p.day()
	st, err := b.p.opts.Store.State(ctx, b.p.opts.Budget, day)
	if err != nil {
		return notify.Budget{}, err
	}
	return notify.NewBudget(b.p.opts.Budget, day, st, int64(b.p.opts.Rules.DailyCapUSD)), nil
}

func (b consoleBackend) Decisions() []console.Decision { return b.p.recent.list() }

func (b consoleBackend) Resolve(ctx context.Context, id string, approve bool, by, note string) (notify.Hold, error) {
	status := store.HoldDenied
	if approve {
		status = store.HoldApproved
	}
	h, rerr := b.p.resolve(ctx, id, status, by, note)
	if rerr != nil {
		return notify.Hold{}, &console.Error{Status: rerr.status, Code: rerr.code, Message: rerr.message}
	}
	return notify.HoldOf(h, b.p.opts.Now()), nil
}

// consoleOptions are the console's settings for the admin handler.
func (p *Proxy) consoleHandler(token string) http.Handler {
	return console.New(console.Options{Token: token, Backend: consoleBackend{p}, Logger: p.log, Now: p.opts.Now,
		SessionTTL: p.opts.ConsoleSessionTTL})
}
