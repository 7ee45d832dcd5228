package storetest

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/payguard/payguard/store"
)

const workers = 64

// race runs fn(i) on n goroutines released together and returns each call's error.
func race(n int, fn func(i int) error) []error {
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			errs[i] = fn(i)
		}()
	}
	close(start)
	wg.Wait()
	return errs
}

// countOK counts nil errors and fails on any error other than the allowed one.
func countOK(t *testing.T, what string, errs []error, allowed error) int {
	t.Helper()
	ok := 0
	for _, err := range errs {
		switch {
		case err == nil:
			ok++
		case !errors.Is(err, allowed):
			t.Fatalf("%s: unexpected error %v", what, err)
		}
	}
	return ok
}

// 64 reservations of 7 against a cap of 100: exactly 14 fit whatever the interleaving; every winner commits
// twice at once and the figures still add up.
func testConcurrentReserveEqual(t *testing.T, s store.Store) {
	const amount, capMicros = 7, 100
	ids := make([]string, workers)
	errs := race(workers, func(i int) error {
		id, err := s.Reserve(ctx, "shared", day, amount, capMicros)
		ids[i] = id
		return err
	})
	won := countOK(t, "Reserve", errs, store.ErrBudgetExceeded)
	if won != capMicros/amount {
		t.Fatalf("%d of %d reservations of %d against cap %d succeeded, want %d", won, workers, amount, capMicros, capMicros/amount)
	}
	wantState(t, s, "shared", day, 0, int64(won*amount))

	var winners []string
	for i, err := range errs {
		if err == nil {
			winners = append(winners, ids[i])
		}
	}
	commitErrs := race(2*len(winners), func(i int) error { return s.Commit(ctx, "shared", day, winners[i/2]) })
	if n := countOK(t, "Commit", commitErrs, nil); n != len(commitErrs) {
		t.Fatalf("%d of %d commits succeeded", n, len(commitErrs))
	}
	wantState(t, s, "shared", day, int64(won*amount), 0)
}

// Mixed amounts, with commits racing reservations: the sum of successful reservations equals
// spent+reserved and never exceeds the cap.
func testConcurrentReserveMixed(t *testing.T, s store.Store) {
	const capMicros = 1_000_000
	var reservedSum, committedSum atomic.Int64
	errs := race(workers, func(i int) error {
		amount := int64(10_000 + (i*7919)%90_000)
		id, err := s.Reserve(ctx, "mixed", day, amount, capMicros)
		if err != nil {
			return err
		}
		reservedSum.Add(amount)
		if i%2 == 0 {
			if err := s.Commit(ctx, "mixed", day, id); err != nil {
				return fmt.Errorf("commit: %w", err)
			}
			committedSum.Add(amount)
		}
		return nil
	})
	won := countOK(t, "Reserve", errs, store.ErrBudgetExceeded)
	if won == 0 || won == workers {
		t.Fatalf("%d of %d reservations succeeded: the case does not exercise the cap", won, workers)
	}
	if reservedSum.Load() > capMicros {
		t.Fatalf("successful reservations add up to %d, over the cap %d", reservedSum.Load(), capMicros)
	}
	// Whatever failed must not have fitted at the end either: the smallest amount is 10_000.
	wantState(t, s, "mixed", day, committedSum.Load(), reservedSum.Load()-committedSum.Load())
}

func testConcurrentTakeTicket(t *testing.T, s store.Store) {
	for round := 0; round < 10; round++ {
		key := fmt.Sprintf("key-%d", round)
		mustPut(t, "store a ticket", s, newTicket(fmt.Sprintf("t%d", round), key, base.Add(time.Hour)))
		takers := 2
		if round%2 == 1 {
			takers = 16
		}
		errs := race(takers, func(int) error { _, err := s.TakeTicket(ctx, key, base); return err })
		if n := countOK(t, "TakeTicket", errs, store.ErrNotFound); n != 1 {
			t.Fatalf("round %d: %d of %d takers won one ticket", round, n, takers)
		}
	}
	// Two tickets, eight takers: exactly two win, with different tickets.
	mustPut(t, "put a", s, newTicket("a", "pair", base.Add(time.Hour)))
	mustPut(t, "put b", s, newTicket("b", "pair", base.Add(time.Hour)))
	got := make([]string, 8)
	errs := race(8, func(i int) error {
		tk, err := s.TakeTicket(ctx, "pair", base)
		got[i] = tk.ID
		return err
	})
	if n := countOK(t, "TakeTicket", errs, store.ErrNotFound); n != 2 {
		t.Fatalf("%d takers won two tickets", n)
	}
	seen := map[string]bool{}
	for i, err := range errs {
		if err == nil {
			seen[got[i]] = true
		}
	}
	if !seen["a"] || !seen["b"] {
		t.Fatalf("winners took %v, want a and b", seen)
	}
}

func testConcurrentUseHold(t *testing.T, s store.Store) {
	must(t, "CreateHold", s.CreateHold(ctx, newHold("h", "k", base, time.Now().Add(time.Hour))))
	_, err := s.ResolveHold(ctx, "h", store.HoldApproved, "ops", "", time.Now())
	must(t, "approve", err)
	errs := race(16, func(int) error { _, err := s.UseHold(ctx, "h"); return err })
	if n := countOK(t, "UseHold", errs, store.ErrAlreadyUsed); n != 1 {
		t.Fatalf("%d of 16 UseHold calls succeeded, want 1", n)
	}
}

func testConcurrentResolveHold(t *testing.T, s store.Store) {
	must(t, "CreateHold", s.CreateHold(ctx, newHold("h", "k", base, base.Add(time.Hour))))
	got := make([]string, 16)
	errs := race(16, func(i int) error {
		status := store.HoldApproved
		if i%2 == 1 {
			status = store.HoldDenied
		}
		h, err := s.ResolveHold(ctx, "h", status, fmt.Sprint("person-", i), "", base.Add(time.Minute))
		got[i] = h.Status
		return err
	})
	if n := countOK(t, "ResolveHold", errs, store.ErrConflict); n != 1 {
		t.Fatalf("%d of 16 ResolveHold calls succeeded, want 1", n)
	}
	for i, err := range errs {
		if err != nil {
			continue
		}
		h, err := s.GetHold(ctx, "h")
		must(t, "GetHold", err)
		if h.Status != got[i] || h.ResolvedBy != fmt.Sprint("person-", i) {
			t.Fatalf("stored %s by %s, but the winner was %s by person-%d", h.Status, h.ResolvedBy, got[i], i)
		}
	}
}

func testConcurrentPaymentSeen(t *testing.T, s store.Store) {
	errs := race(workers, func(int) error { return s.MarkPaymentSeen(ctx, "sha256:replayed", time.Hour) })
	if n := countOK(t, "MarkPaymentSeen", errs, store.ErrAlreadyUsed); n != 1 {
		t.Fatalf("%d of %d MarkPaymentSeen calls succeeded, want 1", n, workers)
	}
}

func testConcurrentTrial(t *testing.T, s store.Store) {
	var oks atomic.Int64
	errs := race(workers, func(i int) error {
		ok, used, err := s.TakeTrial(ctx, "203.0.113.9", day, 3, retention)
		if err != nil {
			return err
		}
		if used < 0 || used > 3 || (ok && used == 0) {
			return fmt.Errorf("TakeTrial = %v, %d", ok, used)
		}
		if ok {
			oks.Add(1)
		}
		return nil
	})
	countOK(t, "TakeTrial", errs, nil)
	if oks.Load() != 3 {
		t.Fatalf("%d of %d concurrent trial calls were let through, want 3", oks.Load(), workers)
	}
	wantTrial(t, s, "203.0.113.9", day, 3, false, 3)
}
