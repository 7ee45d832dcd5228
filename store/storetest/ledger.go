package storetest

import (
	"math"
	"strings"
	"testing"

	"github.com/payguard/payguard/store"
)

func testReserveCommitState(t *testing.T, s store.Store) {
	wantState(t, s, "agent", day, 0, 0)
	r1, err := s.Reserve(ctx, "agent", day, 300_000, 1_000_000)
	must(t, "Reserve r1", err)
	r2, err := s.Reserve(ctx, "agent", day, 200_000, 1_000_000)
	must(t, "Reserve r2", err)
	if r1 == "" || r1 == r2 {
		t.Fatalf("reservation ids %q and %q: want distinct and non-empty", r1, r2)
	}
	wantState(t, s, "agent", day, 0, 500_000)

	must(t, "Commit r1", s.Commit(ctx, "agent", day, r1))
	wantState(t, s, "agent", day, 300_000, 200_000)
	// Idempotent: a second commit of the same reservation changes nothing.
	must(t, "Commit r1 again", s.Commit(ctx, "agent", day, r1))
	wantState(t, s, "agent", day, 300_000, 200_000)

	// r2 is never committed (the payment failed or was abandoned): it keeps holding its share of the cap.
	_, err = s.Reserve(ctx, "agent", day, 500_001, 1_000_000)
	wantErr(t, "Reserve past the cap with an uncommitted reservation", err, store.ErrBudgetExceeded)
	wantState(t, s, "agent", day, 300_000, 200_000)
}

func testCapBoundary(t *testing.T, s store.Store) {
	_, err := s.Reserve(ctx, "b", day, 1_000_001, 1_000_000)
	wantErr(t, "Reserve above the cap", err, store.ErrBudgetExceeded)
	id, err := s.Reserve(ctx, "b", day, 1_000_000, 1_000_000)
	must(t, "Reserve exactly the cap", err)
	_, err = s.Reserve(ctx, "b", day, 1, 1_000_000)
	wantErr(t, "Reserve 1 over a full cap", err, store.ErrBudgetExceeded)
	must(t, "Commit", s.Commit(ctx, "b", day, id))
	_, err = s.Reserve(ctx, "b", day, 1, 1_000_000)
	wantErr(t, "Reserve 1 over a fully spent cap", err, store.ErrBudgetExceeded)
	// A zero amount fits a full cap; a zero cap admits only zero.
	_, err = s.Reserve(ctx, "b", day, 0, 1_000_000)
	must(t, "Reserve 0 on a full cap", err)
	_, err = s.Reserve(ctx, "z", day, 1, 0)
	wantErr(t, "Reserve 1 under a zero cap", err, store.ErrBudgetExceeded)
	// A cap lowered below what is already used admits nothing more.
	_, err = s.Reserve(ctx, "b", day, 0, 999_999)
	wantErr(t, "Reserve under a lowered cap", err, store.ErrBudgetExceeded)
	wantState(t, s, "b", day, 1_000_000, 0)
	wantState(t, s, "z", day, 0, 0)
}

func testCommitUnknown(t *testing.T, s store.Store) {
	wantErr(t, "Commit of an unknown reservation", s.Commit(ctx, "agent", day, "nope"), store.ErrNotFound)
	id, err := s.Reserve(ctx, "agent", day, 10, 100)
	must(t, "Reserve", err)
	wantErr(t, "Commit under another budget", s.Commit(ctx, "other", day, id), store.ErrNotFound)
	wantErr(t, "Commit under another day", s.Commit(ctx, "agent", "2026-11-23", id), store.ErrNotFound)
	wantState(t, s, "agent", day, 0, 10)
	wantState(t, s, "other", day, 0, 0)
	// A malformed day must not reach another budget's ledger, whatever the store's key layout.
	id, err = s.Reserve(ctx, "x:agent", day, 10, 100)
	must(t, "Reserve", err)
	wantErr(t, "Commit with a malformed day", s.Commit(ctx, "agent", day+":x", id), store.ErrNotFound)
	wantState(t, s, "x:agent", day, 0, 10)
}

func testDaysAndBudgets(t *testing.T, s store.Store) {
	id, err := s.Reserve(ctx, "agent", day, 90, 100)
	must(t, "Reserve", err)
	must(t, "Commit", s.Commit(ctx, "agent", day, id))
	// A new UTC day starts at zero.
	_, err = s.Reserve(ctx, "agent", "2026-11-23", 100, 100)
	must(t, "Reserve on the next day", err)
	// Budgets do not share a cap, including names that could collide if keys were joined carelessly.
	_, err = s.Reserve(ctx, "agent:2026-11-22", day, 100, 100)
	must(t, "Reserve on a colliding-looking budget", err)
	_, err = s.Reserve(ctx, "other", day, 100, 100)
	must(t, "Reserve on another budget", err)
	wantState(t, s, "agent", day, 90, 0)
	wantState(t, s, "agent", "2026-11-23", 0, 100)
	wantState(t, s, "agent:2026-11-22", day, 0, 100)
	wantState(t, s, "other", day, 0, 100)
}

func testLedgerInvalid(t *testing.T, s store.Store) {
	for _, c := range []struct {
		name, budget, day string
		amount, cap       int64
	}{
		{"negative amount", "a", day, -1, 100},
		{"negative cap", "a", day, 1, -1},
		{"empty budget", "", day, 1, 100},
		{"malformed day", "a", "2026-11-22T00:00:00Z", 1, 100},
		{"impossible day", "a", "2026-02-30", 1, 100},
		{"empty day", "a", "", 1, 100},
		{"oversized budget", strings.Repeat("b", store.MaxNameBytes+1), day, 1, 100},
		{"budget with NUL", "a\x00b", day, 1, 100},
		{"budget not UTF-8", "a\xffb", day, 1, 100},
	} {
		_, err := s.Reserve(ctx, c.budget, c.day, c.amount, c.cap)
		wantErr(t, "Reserve with "+c.name, err, store.ErrInvalid)
	}
	_, err := s.State(ctx, "a", "22/11/2026")
	wantErr(t, "State with a malformed day", err, store.ErrInvalid)
	wantState(t, s, "a", day, 0, 0)
}

func testLedgerOverflow(t *testing.T, s store.Store) {
	id, err := s.Reserve(ctx, "big", day, math.MaxInt64, math.MaxInt64)
	must(t, "Reserve MaxInt64", err)
	_, err = s.Reserve(ctx, "big", day, 1, math.MaxInt64)
	wantErr(t, "Reserve past MaxInt64", err, store.ErrBudgetExceeded)
	_, err = s.Reserve(ctx, "big", day, math.MaxInt64, math.MaxInt64)
	wantErr(t, "Reserve 2×MaxInt64", err, store.ErrBudgetExceeded)
	must(t, "Commit", s.Commit(ctx, "big", day, id))
	wantState(t, s, "big", day, math.MaxInt64, 0)
	// Values just past 2^53 must be exact: no float decides a cap.
	const p = 1<<53 + 1
	_, err = s.Reserve(ctx, "exact", day, p, p)
	must(t, "Reserve 2^53+1", err)
	_, err = s.Reserve(ctx, "exact", day, 1, p)
	wantErr(t, "Reserve 1 over 2^53+1", err, store.ErrBudgetExceeded)
	wantState(t, s, "exact", day, 0, p)
	// Around 10^15, where a store may compare small figures as numbers and larger ones otherwise (redis): a
	// cap of 15 digits and one of 16, a total on either side of 10^15, exactly at the cap and one past it.
	for _, c := range []struct {
		name      string
		cap, held int64
	}{
		{"15-digit cap", 999_999_999_999_999, 999_999_999_999_990},
		{"16-digit cap", 1_000_000_000_000_000, 999_999_999_999_990},
		{"16-digit cap, total past 10^15", 1_000_000_000_000_005, 999_999_999_999_990},
	} {
		b := "edge " + c.name
		_, err = s.Reserve(ctx, b, day, c.held, c.cap)
		must(t, "Reserve "+c.name, err)
		_, err = s.Reserve(ctx, b, day, c.cap-c.held+1, c.cap)
		wantErr(t, "Reserve 1 past the "+c.name, err, store.ErrBudgetExceeded)
		_, err = s.Reserve(ctx, b, day, c.cap-c.held, c.cap)
		must(t, "Reserve up to the "+c.name, err)
		_, err = s.Reserve(ctx, b, day, 1, c.cap)
		wantErr(t, "Reserve 1 past the full "+c.name, err, store.ErrBudgetExceeded)
		_, err = s.Reserve(ctx, b, day, 0, c.cap)
		must(t, "Reserve 0 at the full "+c.name, err)
		wantState(t, s, b, day, 0, c.cap)
	}
}

// testSettle: an upto payment settles its usage, at most the reservation; the rest is released at once.
func testSettle(t *testing.T, s store.Store) {
	r1, err := s.Reserve(ctx, "agent", day, 500_000, 1_000_000)
	must(t, "Reserve r1", err)
	r2, err := s.Reserve(ctx, "agent", day, 400_000, 1_000_000)
	must(t, "Reserve r2", err)
	wantState(t, s, "agent", day, 0, 900_000)

	wantErr(t, "Settle above the reservation", s.Settle(ctx, "agent", day, r1, 500_001), store.ErrInvalid)
	wantErr(t, "Settle a negative amount", s.Settle(ctx, "agent", day, r1, -1), store.ErrInvalid)
	wantErr(t, "Settle an unknown reservation", s.Settle(ctx, "agent", day, "nope", 1), store.ErrNotFound)
	wantErr(t, "Settle under another budget", s.Settle(ctx, "other", day, r1, 1), store.ErrNotFound)
	wantState(t, s, "agent", day, 0, 900_000)

	must(t, "Settle r1 for 120000", s.Settle(ctx, "agent", day, r1, 120_000))
	wantState(t, s, "agent", day, 120_000, 400_000)
	// Idempotent, whatever the second call says: the first settlement stands.
	must(t, "Settle r1 again", s.Settle(ctx, "agent", day, r1, 500_000))
	must(t, "Commit r1 after its settle", s.Commit(ctx, "agent", day, r1))
	wantState(t, s, "agent", day, 120_000, 400_000)

	// Zero is a settlement (no usage): the whole reservation is released.
	must(t, "Settle r2 for 0", s.Settle(ctx, "agent", day, r2, 0))
	wantState(t, s, "agent", day, 120_000, 0)
	// The released share is budget again.
	_, err = s.Reserve(ctx, "agent", day, 880_000, 1_000_000)
	must(t, "Reserve what the settlements released", err)
	_, err = s.Reserve(ctx, "agent", day, 1, 1_000_000)
	wantErr(t, "Reserve past the cap", err, store.ErrBudgetExceeded)

	// A settlement of the whole amount is a commit; a committed reservation cannot be settled lower.
	r3, err := s.Reserve(ctx, "c", day, 300, 1_000)
	must(t, "Reserve r3", err)
	must(t, "Commit r3", s.Commit(ctx, "c", day, r3))
	must(t, "Settle r3 after its commit", s.Settle(ctx, "c", day, r3, 1))
	wantState(t, s, "c", day, 300, 0)
}
