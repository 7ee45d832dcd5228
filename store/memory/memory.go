// Package memory is the in-process store: everything lives in maps behind one mutex. It is for tests and for
// a single process that may forget its state on exit; nothing survives a restart.
package memory

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/payguard/payguard/store"
)

// purgeEvery bounds how often the expiring maps (trial counters, seen payments, tickets) are swept.
const purgeEvery = time.Minute

// Store implements store.Store in memory. The zero value is not usable; call New.
type Store struct {
	now func() time.Time

	mu         sync.Mutex
	closed     bool
	lastPurge  time.Time
	budgets    map[budgetDay]*budgetState
	holds      map[string]*store.Hold
	holdOrder  []string                   // creation order, to break CreatedAt ties in FindHold
	tickets    map[string][]*store.Ticket // by key, in put order
	ticketIDs  map[string]bool
	seen       map[string]time.Time // payment digest → expiry
	deliveries map[string]delivery  // store.Deliveries
	trials     map[trialKey]*trialEntry
	obs        map[string][]store.Observation        // by URL, in put order
	sellers    map[string]struct{}                   // hosts that answered 402 (store.Sellers)
	catPrices  map[string][]store.CategoryPrice      // category price sample (store.CategoryPrices)
	sitePayees map[string]map[string]store.SitePayee // site → key → entry (store.SitePayees)
	alarms     map[string]store.Alarm                // settlement alarms by host (store.Alarms)
	updatedAt  time.Time
	// nextRelease is the earliest ExpiresAt of a stored ticket neither taken nor released (zero: none), so
	// that finding nothing to release costs one comparison (release.go).
	nextRelease time.Time
}

type budgetDay struct{ budget, day string }

type budgetState struct {
	spent, reserved int64
	reservations    map[string]*reservation
}

type reservation struct {
	amount    int64
	committed bool
}

type trialKey struct{ client, day string }

type trialEntry struct {
	count   int
	expires time.Time
}

var (
	_ store.Store   = (*Store)(nil)
	_ store.Sellers = (*Store)(nil)
)

// New returns an empty store on the system clock.
func New() *Store { return NewWithClock(time.Now) }

// NewWithClock returns an empty store that reads the time from now where the interface takes none
// (UseHold's expiry check, payment-digest and trial-counter expiry).
func NewWithClock(now func() time.Time) *Store {
	return &Store{
		now:        now,
		budgets:    map[budgetDay]*budgetState{},
		holds:      map[string]*store.Hold{},
		tickets:    map[string][]*store.Ticket{},
		ticketIDs:  map[string]bool{},
		seen:       map[string]time.Time{},
		deliveries: map[string]delivery{},
		trials:     map[trialKey]*trialEntry{},
		obs:        map[string][]store.Observation{},
		sellers:    map[string]struct{}{},
		catPrices:  map[string][]store.CategoryPrice{},
		sitePayees: map[string]map[string]store.SitePayee{},
		alarms:     map[string]store.Alarm{},
	}
}

// lock takes the mutex and fails once the store is closed.
func (s *Store) lock(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return fmt.Errorf("store/memory: store is closed")
	}
	return nil
}

// Close drops the state; later calls fail.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	return nil
}

// Reserve implements store.Ledger.
func (s *Store) Reserve(ctx context.Context, budget, day string, amountMicros, capMicros int64) (string, error) {
	if err := store.CheckReserve(budget, day, amountMicros, capMicros); err != nil {
		return "", err
	}
	if err := s.lock(ctx); err != nil {
		return "", err
	}
	defer s.mu.Unlock()
	s.purgeLocked()
	return s.reserveLocked(budget, day, amountMicros, capMicros)
}

// reserveLocked is Reserve with s.mu held and the arguments checked.
func (s *Store) reserveLocked(budget, day string, amountMicros, capMicros int64) (string, error) {
	k := budgetDay{budget, day}
	b := s.budgets[k]
	if b == nil {
		b = &budgetState{reservations: map[string]*reservation{}}
		s.budgets[k] = b
	}
	if !store.Fits(b.spent, b.reserved, amountMicros, capMicros) && s.releaseLocked(s.now()) > 0 {
		b = s.budgets[k] // a lease released, maybe in this budget: decide again
	}
	if !store.Fits(b.spent, b.reserved, amountMicros, capMicros) {
		return "", fmt.Errorf("%w: budget %s on %s: spent %d + reserved %d + %d > cap %d",
			store.ErrBudgetExceeded, budget, day, b.spent, b.reserved, amountMicros, capMicros)
	}
	id := store.NewID()
	b.reserved += amountMicros
	b.reservations[id] = &reservation{amount: amountMicros}
	return id, nil
}

// Commit implements store.Ledger.
func (s *Store) Commit(ctx context.Context, budget, day, reservationID string) error {
	return s.settle(ctx, budget, day, reservationID, -1)
}

// Settle implements store.Ledger.
func (s *Store) Settle(ctx context.Context, budget, day, reservationID string, settledMicros int64) error {
	if err := store.CheckSettle(budget, day, reservationID, settledMicros); err != nil {
		return err
	}
	return s.settle(ctx, budget, day, reservationID, settledMicros)
}

// settle commits a reservation for settled micro-dollars; -1 is the whole amount (Commit).
func (s *Store) settle(ctx context.Context, budget, day, reservationID string, settled int64) error {
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.mu.Unlock()
	b := s.budgets[budgetDay{budget, day}]
	var r *reservation
	if b != nil {
		r = b.reservations[reservationID]
	}
	if r == nil {
		return store.NoReservation(budget, day, reservationID)
	}
	if r.committed {
		return nil
	}
	if settled < 0 {
		settled = r.amount
	}
	if settled > r.amount {
		return store.SettledAbove(reservationID, settled, r.amount)
	}
	r.committed = true
	b.reserved -= r.amount
	b.spent += settled
	return nil
}

// State implements store.Ledger; an unknown budget or day is all zeros.
func (s *Store) State(ctx context.Context, budget, day string) (store.BudgetState, error) {
	if err := store.CheckDay(day); err != nil {
		return store.BudgetState{}, err
	}
	if err := s.lock(ctx); err != nil {
		return store.BudgetState{}, err
	}
	defer s.mu.Unlock()
	s.releaseLocked(s.now())
	st := store.BudgetState{Day: day}
	if b := s.budgets[budgetDay{budget, day}]; b != nil {
		st.Spent, st.Reserved = b.spent, b.reserved
	}
	return st, nil
}

// sortedObservations returns a copy ordered oldest first; put order breaks ties.
func sortedObservations(in []store.Observation) []store.Observation {
	out := append([]store.Observation{}, in...) // never nil: an unknown URL has no observations, not null ones
	sort.SliceStable(out, func(i, j int) bool { return out[i].ObservedAt.Before(out[j].ObservedAt) })
	return out
}
