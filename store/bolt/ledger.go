package bolt

import (
	"context"
	"encoding/binary"
	"fmt"

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

// Reserve implements store.Ledger in one write transaction (possibly shared, see write).
func (s *Store) Reserve(ctx context.Context, budget, day string, amountMicros, capMicros int64) (string, error) {
	if err := store.CheckReserve(budget, day, amountMicros, capMicros); err != nil {
		return "", err
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	id := store.NewID() // chosen once: every run of the function below writes the same reservation
	var refused error   // over the cap, as the committed run found it (see write)
	err := s.write(func(tx *bbolt.Tx) error {
		if err := s.maybePurge(tx, s.now()); err != nil {
			return err
		}
		var err error
		refused, err = reserveTx(tx, budget, day, id, amountMicros, capMicros)
		return err
	})
	if err != nil {
		return "", err
	}
	if refused != nil {
		return "", refused
	}
	return id, nil
}

// reserveTx writes reservation id in tx, or reports (refused, no error) that it would exceed the cap.
func reserveTx(tx *bbolt.Tx, budget, day, id string, amountMicros, capMicros int64) (refused, err error) {
	budgets, key := tx.Bucket(bucketBudgets), budgetKey(budget, day)
	spent, reserved := readBudget(budgets, key)
	if !store.Fits(spent, reserved, amountMicros, capMicros) {
		return fmt.Errorf("%w: budget %s on %s: spent %d + reserved %d + %d > cap %d",
			store.ErrBudgetExceeded, budget, day, spent, reserved, amountMicros, capMicros), nil
	}
	if err := writeBudget(budgets, key, spent, reserved+amountMicros); err != nil {
		return nil, err
	}
	rec := binary.BigEndian.AppendUint64(nil, uint64(amountMicros))
	rec = append(rec, 0) // not committed
	return nil, tx.Bucket(bucketReservations).Put([]byte(day+id), append(rec, key...))
}

// Commit implements store.Ledger in one write transaction (possibly shared, see write).
func (s *Store) Commit(ctx context.Context, budget, day, reservationID string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := store.CheckDay(day); err != nil {
		return fmt.Errorf("%w: reservation %q in budget %s on %s", store.ErrNotFound, reservationID, budget, day)
	}
	var missing bool // as the committed run found it (see write)
	err := s.write(func(tx *bbolt.Tx) error {
		missing = false
		res, key := tx.Bucket(bucketReservations), budgetKey(budget, day)
		resKey := []byte(day + reservationID)
		rec := res.Get(resKey)
		if len(rec) < 9 || string(rec[9:]) != string(key) {
			missing = true
			return nil
		}
		if rec[8] == 1 {
			return nil // committed before
		}
		amount := int64(binary.BigEndian.Uint64(rec[:8]))
		budgets := tx.Bucket(bucketBudgets)
		spent, reserved := readBudget(budgets, key)
		if err := writeBudget(budgets, key, spent+amount, reserved-amount); err != nil {
			return err
		}
		done := append([]byte(nil), rec...)
		done[8] = 1
		return res.Put(resKey, done)
	})
	if err != nil {
		return err
	}
	if missing {
		return fmt.Errorf("%w: reservation %q in budget %s on %s", store.ErrNotFound, reservationID, budget, day)
	}
	return nil
}

// State implements store.Ledger; an unknown budget or day is all zeros.
func (s *Store) State(ctx context.Context, budget, day string) (store.BudgetState, error) {
	if err := store.CheckDay(day); err != nil {
		return store.BudgetState{}, err
	}
	if err := ctx.Err(); err != nil {
		return store.BudgetState{}, err
	}
	st := store.BudgetState{Day: day}
	err := s.db.View(func(tx *bbolt.Tx) error {
		st.Spent, st.Reserved = readBudget(tx.Bucket(bucketBudgets), budgetKey(budget, day))
		return nil
	})
	return st, err
}
