package bolt

import (
	"context"
	"encoding/binary"

	bbolt "go.etcd.io/bbolt"

	"github.com/payguard/payguard/store"
)

func budgetKey(budget, day string) []byte { return []byte(day + budget) }

func readBudget(b *bbolt.Bucket, key []byte) (spent, reserved int64) {
	if v := b.Get(key); len(v) == 16 {
		return int64(binary.BigEndian.Uint64(v[:8])), int64(binary.BigEndian.Uint64(v[8:]))
	}
	return 0, 0
}

func writeBudget(b *bbolt.Bucket, key []byte, spent, reserved int64) error {
	v := binary.BigEndian.AppendUint64(nil, uint64(spent))
	return b.Put(key, binary.BigEndian.AppendUint64(v, uint64(reserved)))
}

// Reserve implements store.Ledger through the ledger's write path (ledgerlog.go) and returns once the
// reservation is committed to the file.
func (s *Store) Reserve(ctx context.Context, budget, day string, amountMicros, capMicros int64) (string, error) {
	if err := store.CheckReserve(budget, day, amountMicros, capMicros); err != nil {
		return "", err
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	id := store.NewID()
	op, err := s.reserve(ctx, budget, day, id, amountMicros, capMicros, nil)
	if err != nil {
		return "", err
	}
	// Should ctx end first, the reservation still counts, as an abandoned one does.
	if err := s.wait(ctx, op); err != nil {
		return "", err
	}
	return id, nil
}

// Commit implements store.Ledger through the ledger's write path. It returns once the commit counts and is
// journaled (safe from kill -9), without waiting for the file: moving an amount from reserved to spent leaves
// their sum, which the cap check uses, as it was, so a power cut that loses the commit loses only the split,
// never budget. (The proxy commits after the seller's settlement, before the agent gets its answer.)
func (s *Store) Commit(ctx context.Context, budget, day, reservationID string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := store.CheckCommit(budget, day, reservationID); err != nil {
		return err
	}
	return s.commit(ctx, budget, day, reservationID, -1)
}

// Settle implements store.Ledger as Commit does (journaled, not waiting for the file): the settled amount
// becomes spent and the rest of the reservation leaves reserved. A lost settle loses only the split between
// reserved and spent, never budget, as for Commit.
func (s *Store) Settle(ctx context.Context, budget, day, reservationID string, settledMicros int64) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := store.CheckSettle(budget, day, reservationID, settledMicros); err != nil {
		return err
	}
	return s.commit(ctx, budget, day, reservationID, settledMicros)
}

// State implements store.Ledger; an unknown budget or day is all zeros. It counts queued operations, as the
// cap check does. A stopped ledger (a failed commit) answers with its error, so /readyz and every decision
// see it at once.
func (s *Store) State(ctx context.Context, budget, day string) (store.BudgetState, error) {
	if err := store.CheckDay(day); err != nil {
		return store.BudgetState{}, err
	}
	if err := ctx.Err(); err != nil {
		return store.BudgetState{}, err
	}
	s.log.mu.Lock()
	defer s.log.mu.Unlock() // the figures change under the lock
	if s.log.broken != nil {
		return store.BudgetState{}, s.log.broken
	}
	if _, err := s.releaseDueLocked(ctx, s.now()); err != nil {
		return store.BudgetState{}, err
	}
	f, err := s.budgetLocked(budgetKey(budget, day))
	if err != nil {
		return store.BudgetState{}, err
	}
	return store.BudgetState{Day: day, Spent: f.spent, Reserved: f.reserved}, nil
}
