// Package storetest is the conformance suite every store implementation passes: the same functional and
// concurrency cases against memory, bolt and redis. Run it from an implementation's tests with -race.
package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/payguard/payguard/store"
)

// NewStore returns a fresh, empty store for one subtest; the suite closes it.
type NewStore func(t *testing.T) store.Store

// Run runs every case, each on a fresh store.
func Run(t *testing.T, newStore NewStore) {
	cases := []struct {
		name string
		fn   func(t *testing.T, s store.Store)
	}{
		{"Ledger/ReserveCommitState", testReserveCommitState},
		{"Ledger/CapBoundary", testCapBoundary},
		{"Ledger/CommitUnknown", testCommitUnknown},
		{"Ledger/Settle", testSettle},
		{"Ledger/DaysAndBudgetsAreSeparate", testDaysAndBudgets},
		{"Ledger/InvalidArguments", testLedgerInvalid},
		{"Ledger/NoOverflow", testLedgerOverflow},
		{"Holds/CreateGet", testHoldCreateGet},
		{"Holds/FindNewest", testHoldFindNewest},
		{"Holds/List", testHoldList},
		{"Holds/Resolve", testHoldResolve},
		{"Holds/ResolveExpired", testHoldResolveExpired},
		{"Holds/Use", testHoldUse},
		{"Holds/UseExpired", testHoldUseExpired},
		{"Tickets/PutTake", testTicketPutTake},
		{"Tickets/NewestUnexpired", testTicketNewestUnexpired},
		{"Tickets/Invalid", testTicketInvalid},
		{"Tickets/PaymentSeen", testPaymentSeen},
		{"Tickets/ReserveTicket", testReserveTicket},
		{"Deliveries/PutGet", testDeliveries},
		{"Trial/Limit", testTrialLimit},
		{"Trial/Retention", testTrialRetention},
		{"Endpoints/Observations", testObservations},
		{"Endpoints/Retention", testObservationRetention},
		{"Sellers/Mark", testSellers},
		{"Alarms/RaiseFindClear", testAlarms},
		{"Alarms/Bounded", testAlarmsBounded},
		{"Endpoints/CategoryPrices", testCategoryPrices},
		{"Endpoints/SitePayees", testSitePayees},
		{"Concurrent/ReserveEqualAmounts", testConcurrentReserveEqual},
		{"Concurrent/ReserveMixedAmounts", testConcurrentReserveMixed},
		{"Concurrent/TakeTicket", testConcurrentTakeTicket},
		{"Concurrent/ReserveTicket", testConcurrentReserveTicket},
		{"Concurrent/UseHold", testConcurrentUseHold},
		{"Concurrent/ResolveHold", testConcurrentResolveHold},
		{"Concurrent/PaymentSeen", testConcurrentPaymentSeen},
		{"Concurrent/Trial", testConcurrentTrial},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newStore(t)
			t.Cleanup(func() {
				if err := s.Close(); err != nil {
					t.Errorf("Close: %v", err)
				}
			})
			c.fn(t, s)
		})
	}
}

// base is the instant for stored times: the start of the run, to the second, plus nanoseconds that a store
// must keep. It is near the store's own clock because tickets stored with ReserveTicket are leases the
// store releases after they expire by its clock (store.Tickets); cases that depend on the store's own clock
// use time.Now.
var base = time.Now().UTC().Truncate(time.Second).Add(123456789)

const day = "2026-11-22"

var ctx = context.Background()

// wantErr fails unless errors.Is(err, target).
func wantErr(t *testing.T, what string, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("%s: error %v, want %v", what, err, target)
	}
}

func must(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func wantState(t *testing.T, s store.Store, budget, day string, spent, reserved int64) {
	t.Helper()
	st, err := s.State(ctx, budget, day)
	must(t, "State", err)
	want := store.BudgetState{Day: day, Spent: spent, Reserved: reserved}
	if st != want {
		t.Fatalf("State(%s, %s) = %+v, want %+v", budget, day, st, want)
	}
}
