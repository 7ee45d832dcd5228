package bolt

// The free-trial counter goes through the ledger's journal (ledgerlog.go), not through its own fsynced
// commit. A trial call is decided under the journal's lock against the counter with every queued operation
// counted, appended to the journal with one write(2) (so a kill -9 loses nothing: the next start replays
// it), and committed to the file in the applier's next group commit, within Options.CommitDelay.
//
// Why: `payguard serve` takes the counter on every ?trial=1 call and on every MCP trial call, and with one
// commit and its two fdatasyncs per call (shared by concurrent callers through bbolt's Batch) the embedded
// default store held the server to about 5,000 trial preflights a second, where the memory store served
// 11,000. No money moves on a trial call; what a power cut (not a kill -9) can lose is the count of the
// calls of the last few milliseconds, so a client could get those calls again for free. That is the whole
// price, and the reason the paid path's replay marks (MarkPaymentSeen), which do guard money, still commit
// before they return.

import (
	"context"
	"encoding/binary"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/payguard/payguard/store"
)

// trialCount is a counter with queued operations on it.
type trialCount struct {
	count   uint64
	expires int64 // unix ns
	refs    int
}

// TakeTrial implements store.Trial. The entry expires retention after the day's first call; expired
// entries are purged lazily. It returns once the call counts and is journaled (see above).
func (s *Store) TakeTrial(ctx context.Context, client, day string, limit int, retention time.Duration) (bool, int, error) {
	if err := store.CheckTrial(client, day, retention); err != nil {
		return false, 0, err
	}
	if err := ctx.Err(); err != nil {
		return false, 0, err
	}
	l := &s.log
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := s.usableLocked(); err != nil {
		return false, 0, err
	}
	if err := s.roomLocked(ctx); err != nil {
		return false, 0, err
	}
	key := day + client
	now := s.now()
	count, expires := uint64(0), now.Add(retention).UnixNano()
	cur, err := s.trialLocked(key)
	if err != nil {
		return false, 0, err
	}
	if cur != nil && cur.expires >= now.UnixNano() {
		count, expires = cur.count, cur.expires
	}
	if limit <= 0 || count >= uint64(limit) {
		return false, int(count), nil // a refusal does not count, and writes nothing
	}
	op := &ledgerOp{Kind: opTrial, Day: day, ID: client, Amount: int64(count + 1), Expires: expires}
	if err := s.enqueueLocked(op); err != nil {
		return false, 0, err
	}
	refs := 1
	if q := l.trials[key]; q != nil {
		refs += q.refs
	}
	l.trials[key] = &trialCount{count: count + 1, expires: expires, refs: refs}
	return true, int(count + 1), nil
}

// trialLocked is the counter at key (day+client) as it will be once the queue is applied, or nil if there is
// none (it may have expired); l.mu is held.
func (s *Store) trialLocked(key string) (*trialCount, error) {
	if q := s.log.trials[key]; q != nil {
		return q, nil
	}
	var c *trialCount
	err := s.db.View(func(tx *bbolt.Tx) error {
		if v := tx.Bucket(bucketTrial).Get([]byte(key)); len(v) == 16 {
			c = &trialCount{count: binary.BigEndian.Uint64(v[:8]), expires: int64(binary.BigEndian.Uint64(v[8:]))}
		}
		return nil
	})
	return c, err
}

// settleTrialLocked drops an applied trial operation's hold on the in-memory counter; l.mu is held.
func (s *Store) settleTrialLocked(op *ledgerOp) {
	key := op.Day + op.ID
	if q := s.log.trials[key]; q != nil {
		if q.refs--; q.refs <= 0 {
			delete(s.log.trials, key)
		}
	}
}

// applyTrial writes a trial counter's value. It never lowers what the file has (the same entry with a count
// as high, or a newer entry, which expires later), so a replayed record is harmless.
func applyTrial(tx *bbolt.Tx, op *ledgerOp) error {
	b, key := tx.Bucket(bucketTrial), []byte(op.Day+op.ID)
	if v := b.Get(key); len(v) == 16 {
		count, expires := int64(binary.BigEndian.Uint64(v[:8])), int64(binary.BigEndian.Uint64(v[8:]))
		if expires > op.Expires || expires == op.Expires && count >= op.Amount {
			return nil
		}
	}
	return b.Put(key, binary.BigEndian.AppendUint64(u64(uint64(op.Amount)), uint64(op.Expires)))
}
