package notify

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"log/slog"
	"maps"
	"slices"
	"time"

	"github.com/payguard/payguard/proxy/view"
	"github.com/payguard/payguard/store"
)

// Source is what the watcher reads: the store's holds and ledger, and MarkPaymentSeen, the store's
// set-once primitive (memory, bolt and Redis alike), used here to claim each event once across a fleet.
type Source interface {
	ListHolds(ctx context.Context, status string) ([]store.Hold, error)
	GetHold(ctx context.Context, id string) (store.Hold, error)
	State(ctx context.Context, budget, day string) (store.BudgetState, error)
	MarkPaymentSeen(ctx context.Context, digest string, ttl time.Duration) error
}

// Sink receives events; *Sender is one.
type Sink interface{ Send(Event) }

// WatcherOptions configure a Watcher.
type WatcherOptions struct {
	Source     Source
	Sink       Sink
	Budget     string
	CapMicros  int64
	ConsoleURL string
	Poll       time.Duration // default 2 s
	Now        func() time.Time
	Logger     *slog.Logger
}

// claimTTL is how long an event's claim is kept: far longer than any hold lives.
const claimTTL = 7 * 24 * time.Hour

// Watcher turns changes of the store's holds into events: a new pending hold is created; a pending hold
// that is no longer pending was approved, denied or expired; a pending hold past its expiry expired.
// It reads the store every Poll, and at once when Kick is called (this process created or resolved one).
type Watcher struct {
	o       WatcherOptions
	kick    chan struct{}
	pending map[string]bool // pending holds seen at the last scan
	expired map[string]bool // pending holds past expiry whose event is settled (they stay pending in the store)
}

// NewWatcher builds a watcher; Run starts it.
func NewWatcher(o WatcherOptions) *Watcher {
	if o.Poll <= 0 {
		o.Poll = 2 * time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return &Watcher{o: o, kick: make(chan struct{}, 1), pending: map[string]bool{}, expired: map[string]bool{}}
}

// Kick asks for a scan now. It never blocks: it is called right after a hold is written.
func (w *Watcher) Kick() {
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

// Run scans until ctx ends.
func (w *Watcher) Run(ctx context.Context) {
	t := time.NewTicker(w.o.Poll)
	defer t.Stop()
	for {
		w.Scan(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-w.kick:
		}
	}
}

// Scan reads the store once and sends the events of what changed since the last scan.
func (w *Watcher) Scan(ctx context.Context) {
	hs, err := w.o.Source.ListHolds(ctx, store.HoldPending)
	if err != nil {
		w.o.Logger.Warn("notify: holds unreadable", "error", err.Error())
		return
	}
	now := w.o.Now()
	seen := make(map[string]bool, len(hs))
	// Only holds still listed are remembered as expired: the map does not grow with every hold ever made.
	expired := make(map[string]bool, len(w.expired))
	for _, h := range hs {
		if !now.Before(h.ExpiresAt) {
			if w.expired[h.ID] || w.emit(ctx, HoldExpired, h, now) {
				expired[h.ID] = true
			}
			continue
		}
		seen[h.ID] = true
		if !w.pending[h.ID] && !w.emit(ctx, HoldCreated, h, now) {
			delete(seen, h.ID) // not sent: try again next scan
		}
	}
	// In a stable order (map order is random): resolutions seen in one scan go out by hold id.
	for _, id := range slices.Sorted(maps.Keys(w.pending)) {
		if seen[id] {
			continue
		}
		h, err := w.o.Source.GetHold(ctx, id)
		if err != nil {
			if !errors.Is(err, store.ErrNotFound) {
				seen[id] = true // unreadable now: look again next scan
			}
			continue
		}
		switch h.Status {
		case store.HoldApproved, store.HoldUsed:
			w.emit(ctx, HoldApproved, h, now)
		case store.HoldDenied:
			w.emit(ctx, HoldDenied, h, now)
		case store.HoldExpired:
			w.emit(ctx, HoldExpired, h, now)
		}
	}
	w.pending, w.expired = seen, expired
}

// emit claims the event in the store and, if this process won the claim, sends it. It reports whether the
// event is settled (sent now or by someone before); false means the claim could not be made.
func (w *Watcher) emit(ctx context.Context, typ string, h store.Hold, now time.Time) bool {
	sum := sha256.Sum256([]byte("payguard-notify\x00" + h.ID + "\x00" + typ))
	switch err := w.o.Source.MarkPaymentSeen(ctx, hex.EncodeToString(sum[:]), claimTTL); {
	case errors.Is(err, store.ErrAlreadyUsed):
		return true
	case err != nil:
		w.o.Logger.Warn("notify: event could not be claimed", "hold_id", h.ID, "type", typ, "error", err.Error())
		return false
	}
	var b *view.Budget
	day := now.UTC().Format("2006-01-02")
	if st, err := w.o.Source.State(ctx, w.o.Budget, day); err == nil {
		nb := view.NewBudget(w.o.Budget, day, st, w.o.CapMicros)
		b = &nb
	}
	hv := view.HoldOf(h, now)
	if typ == HoldExpired {
		hv.Status = store.HoldExpired
	}
	w.o.Sink.Send(New(typ, hv, b, w.o.ConsoleURL, now))
	return true
}
