package bolt

import (
	"time"

	bbolt "go.etcd.io/bbolt"
)

// DefaultBatchDelay is Options.BatchDelay's default. It only ever delays a write that found another write
// in flight, which holds bbolt's writer lock for a commit and its fsync (milliseconds: docs/benchmarks/store.md,
// "Group commit"), so waiting about as long costs that write little and lets the callers arriving
// meanwhile share the next commit.
const DefaultBatchDelay = 2 * time.Millisecond

// write runs fn in a write transaction and returns once it is committed and fsynced (or failed): a nil
// error means the change is durable, as with db.Update.
//
// A write that finds no other write in flight runs at once (db.Update), so a lone caller never waits.
// Otherwise it joins bbolt's batch (db.Batch): the functions of all callers in a batch run one after the
// other in one transaction, each seeing the previous ones' changes, so every operation stays exactly as
// atomic as in its own transaction, and one commit and fsync serves them all.
//
// fn may run more than once (bbolt re-runs a batch without a function that failed, and then runs that one
// alone), so it must derive everything it reports from the transaction it is given and assign its results
// afresh on every run. Refusals the caller expects (over the cap, seen before, not found) are therefore
// results set inside fn, not errors returned from it: an error rolls back the whole batch and makes bbolt
// run it again.
func (s *Store) write(fn func(*bbolt.Tx) error) error {
	n := s.writers.Add(1)
	defer s.writers.Add(-1)
	if n == 1 || !s.batching {
		return s.update(fn)
	}
	// The commit's id, for the mark (bolt.go's update): the last run of fn is the one committed.
	var txid uint64
	err := s.db.Batch(func(tx *bbolt.Tx) error {
		txid = uint64(tx.ID())
		return fn(tx)
	})
	if err == nil {
		_ = s.mark(txid)
	}
	return err
}
