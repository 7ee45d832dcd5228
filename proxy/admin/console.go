package admin

import (
	"context"

	"github.com/payguard/payguard/proxy/view"
	"github.com/payguard/payguard/store"
)

// consoleBackend is the console's view of the proxy: the store's holds, today's budget, the last decisions
// and the shared resolve.
type consoleBackend struct{ h *handler }

// consoleHistory bounds the resolved holds the console lists.
const consoleHistory = 100

func (b consoleBackend) Holds(ctx context.Context) ([]view.Hold, error) {
	hs, err := b.h.o.Holds.ListHolds(ctx, "")
	if err != nil {
		return nil, err
	}
	now := b.h.o.Now()
	var pending, done []view.Hold
	for i := len(hs) - 1; i >= 0; i-- { // newest first
		v := view.HoldOf(hs[i], now)
		if v.Status == store.HoldPending {
			pending = append(pending, v)
		} else if len(done) < consoleHistory {
			done = append(done, v)
		}
	}
	return append(pending, done...), nil
}

func (b consoleBackend) Budget(ctx context.Context) (view.Budget, error) { return b.h.core.Budget(ctx) }

func (b consoleBackend) Decisions() []view.Decision { return b.h.core.RecentDecisions() }

func (b consoleBackend) Resolve(ctx context.Context, id string, approve bool, by, note string) (view.Hold, error) {
	status := store.HoldDenied
	if approve {
		status = store.HoldApproved
	}
	h, rerr := b.h.resolve(ctx, id, status, by, note)
	if rerr != nil {
		return view.Hold{}, rerr // the console answers with its status and body
	}
	return view.HoldOf(h, b.h.o.Now()), nil
}
