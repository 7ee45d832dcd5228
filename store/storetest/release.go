package storetest

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/payguard/payguard/internal/testutil"
	"github.com/payguard/payguard/store"
)

// NewStoreWithClock returns a fresh, empty store that reads its own time from now; the suite closes it.
type NewStoreWithClock func(t *testing.T, now func() time.Time) store.Store

// RunLeases runs the cases of ReserveTicket's leases (store.Tickets): an unused ticket's reservation is
// released after its expiry and the grace, a taken one's never is, and the two are atomic. Each case gets a
// fresh store on a clock the case moves.
func RunLeases(t *testing.T, newStore NewStoreWithClock) {
	cases := []struct {
		name string
		fn   func(t *testing.T, s store.Store, c *testutil.Clock)
	}{
		{"Leases/UnpaidReleased", testUnpaidReleased},
		{"Leases/TakeOrRelease", testTakeOrRelease},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := testutil.NewClock(base)
			s := newStore(t, c.Now)
			t.Cleanup(func() {
				if err := s.Close(); err != nil {
					t.Errorf("Close: %v", err)
				}
			})
			tc.fn(t, s, c)
		})
	}
}

// testUnpaidReleased: 1,000 allowed 402s the agent never pays fill the day's cap while their tickets live;
// after their expiry and the grace the budget is as it was, except for the tickets that were taken (their
// payments were forwarded): one committed, one with an unknown outcome, both still counted.
func testUnpaidReleased(t *testing.T, s store.Store, c *testutil.Clock) {
	const n, amount = 1000, 510_000 // $0.51 each
	const capMicros = n * amount
	ttl := 2 * time.Minute
	expires := base.Add(ttl)
	var unpaid store.Ticket
	for i := range n {
		tk := newTicket(fmt.Sprintf("lease-%d", i), fmt.Sprintf("lease-key-%d", i), expires)
		got, err := s.ReserveTicket(ctx, "agent", day, amount, capMicros, tk)
		if err != nil {
			t.Fatalf("ReserveTicket %d: %v", i, err)
		}
		if i == 2 {
			unpaid = got
		}
	}
	_, err := s.Reserve(ctx, "agent", day, 1, capMicros)
	wantErr(t, "Reserve with every 402's ticket alive", err, store.ErrBudgetExceeded)

	paid, err := s.TakeTicket(ctx, "lease-key-0", base)
	must(t, "TakeTicket of a paid ticket", err)
	must(t, "Commit of the settled payment", s.Commit(ctx, "agent", day, paid.ReservationID))
	unknown, err := s.TakeTicket(ctx, "lease-key-1", base)
	must(t, "TakeTicket of a payment whose outcome stays unknown", err)

	// Expired but within the grace: nothing is released yet.
	c.Set(expires.Add(store.TicketReleaseGrace))
	wantState(t, s, "agent", day, amount, (n-1)*amount)

	c.Set(expires.Add(store.TicketReleaseGrace + time.Second))
	wantState(t, s, "agent", day, amount, amount)
	// A released ticket can be taken by no clock, and its reservation is gone.
	_, err = s.TakeTicket(ctx, "lease-key-2", expires)
	wantErr(t, "TakeTicket of a released ticket", err, store.ErrNotFound)
	wantErr(t, "Commit of a released reservation", s.Commit(ctx, "agent", day, unpaid.ReservationID), store.ErrNotFound)
	// The kept reservations still count: exactly the rest of the cap is free.
	id, err := s.Reserve(ctx, "agent", day, capMicros-2*amount, capMicros)
	must(t, "Reserve of the released budget", err)
	_, err = s.Reserve(ctx, "agent", day, 1, capMicros)
	wantErr(t, "Reserve past the cap after the release", err, store.ErrBudgetExceeded)
	must(t, "Commit of a plain reservation", s.Commit(ctx, "agent", day, id))
	must(t, "Commit of the unknown-outcome reservation later (a late settlement)", s.Commit(ctx, "agent", day, unknown.ReservationID))
	wantState(t, s, "agent", day, capMicros, 0)

	// A plain Reserve is never a lease: far past every expiry it still counts.
	c.Set(expires.Add(24 * time.Hour))
	wantState(t, s, "agent", day, capMicros, 0)
}

// testTakeOrRelease races TakeTicket (by a clock that still sees the tickets alive) against the store's
// release (its clock past the grace): each ticket ends taken with its reservation counted, or released and
// untakeable, never both and never neither.
func testTakeOrRelease(t *testing.T, s store.Store, c *testutil.Clock) {
	const n, amount = 64, 1000
	expires := base.Add(time.Minute)
	for i := range n {
		tk := newTicket(fmt.Sprintf("race-%d", i), fmt.Sprintf("race-key-%d", i), expires)
		if _, err := s.ReserveTicket(ctx, "race", day, amount, n*amount, tk); err != nil {
			t.Fatalf("ReserveTicket %d: %v", i, err)
		}
	}
	c.Set(expires.Add(store.TicketReleaseGrace + time.Second))
	var taken atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 2*n)
	for i := range n {
		wg.Add(2)
		go func() {
			defer wg.Done()
			_, err := s.TakeTicket(ctx, fmt.Sprintf("race-key-%d", i), expires) // the taker's clock: still alive
			switch {
			case err == nil:
				taken.Add(1)
			case !errors.Is(err, store.ErrNotFound):
				errs <- err
			}
		}()
		go func() {
			defer wg.Done()
			if _, err := s.State(ctx, "race", day); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("unexpected error: %v", err)
	}
	wantState(t, s, "race", day, 0, taken.Load()*amount)
	t.Logf("%d of %d tickets taken before their release", taken.Load(), n)
}
