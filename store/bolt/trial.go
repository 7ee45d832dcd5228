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
// calls of the last CommitDelay (20 ms by default), so a client could get those calls again for free. That
// is the whole price, and the reason the paid path's replay marks (MarkPaymentSeen), which do guard money,
// still commit before they return.

import (
	"context"
	"encoding/binary"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/payguard/payguard/store"
)

// trialCount is a counter's value: in the file, or as the newest queued operation on it will leave it.
type trialCount struct {
	count   uint64
	expires int64 // unix ns
}

// encodeTrial and decodeTrial are a counter's value in the trial bucket: count, then expiry (unix ns), 8
// bytes big-endian each.
func encodeTrial(c trialCount) []byte {
	return binary.BigEndian.AppendUint64(u64(c.count), uint64(c.expires))
}

func decodeTrial(v []byte) (trialCount, bool) {
	if len(v) != 16 {
		return trialCount{}, false
	}
	return trialCount{count: binary.BigEndian.Uint64(v[:8]), expires: int64(binary.BigEndian.Uint64(v[8:]))}, true
}

// TakeTrial implements store.Trial. The entry expires retention after the day's first call; expired
// entries are purged by the store's sweep (within a minute, idle or not). It returns once the call counts
// and is journaled (see above).
func (s *Store) TakeTrial(ctx context.Context, client, day string, limit int, retention time.Duration) (bool, int, error) {
	if err := store.CheckTrial(client, day, retention); err != nil {
		return false, 0, err
	}
	if err := ctx.Err(); err != nil {
		return false, 0, err
	}
	l := &s.log
	key := day + client
	// The file's counter is read before the journal's lock is taken (see trialSettled): the read transaction
	// is the longer half of the call, and every trial call of the server queues on that lock.
	gen := l.trialSettled.Load()
	read, readOK, readErr := s.fileTrial(key)
	if s.trialReadHook != nil {
		s.trialReadHook()
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := s.usableLocked(); err != nil {
		return false, 0, err
	}
	if err := s.roomLocked(ctx); err != nil {
		return false, 0, err
	}
	now := s.now()
	count, expires := uint64(0), now.Add(retention).UnixNano()
	cur, ok := l.trials[key]
	if !ok && (readErr != nil || l.trialSettled.Load() != gen) {
		// A queued counter was settled since the read began (or the read failed): the file may have changed
		// under it, so read it again, as it is now.
		read, readOK, readErr = s.fileTrial(key)
		if readErr != nil {
			return false, 0, readErr
		}
	}
	if !ok {
		cur, ok = read, readOK
	}
	if ok && cur.expires >= now.UnixNano() {
		count, expires = cur.count, cur.expires
	}
	if limit <= 0 || count >= uint64(limit) {
		return false, int(count), nil // a refusal does not count, and writes nothing
	}
	op := &ledgerOp{Kind: opTrial, Day: day, ID: client, Amount: int64(count + 1), Expires: expires}
	if err := s.enqueueLocked(op); err != nil {
		return false, 0, err
	}
	l.trials[key] = trialCount{count: count + 1, expires: expires}
	return true, int(count + 1), nil
}

// fileTrial is the counter at key (day+client) in the file, as its last commit left it; ok is false if there
// is none (an expired one may be reported).
//
// TakeTrial calls it before it takes the journal's lock, and may use what it read once it holds the lock,
// if the counter is not queued (l.trials has it then, newer than the file) and no queued counter was
// settled since the read began (trialSettled has not moved). That read is as good as one under the lock: a
// counter leaves l.trials only in settleTrialLocked, after the commit that wrote it to the file, and
// settling moves trialSettled. So if trialSettled did not move and the key is not in l.trials, no operation
// on it was queued or settled in between, and every earlier one was committed before the read began, which
// then saw it. The only other writer of the bucket is the purge, which deletes counters that have expired,
// and an expired counter counts as none either way.
func (s *Store) fileTrial(key string) (c trialCount, ok bool, err error) {
	err = s.db.View(func(tx *bbolt.Tx) error {
		c, ok = decodeTrial(tx.Bucket(bucketTrial).Get([]byte(key)))
		return nil
	})
	return c, ok, err
}

// opTrialCount is the value a trial operation writes.
func opTrialCount(op *ledgerOp) trialCount {
	return trialCount{count: uint64(op.Amount), expires: op.Expires}
}

// settleTrialLocked forgets the in-memory counter once the newest operation on it is applied; l.mu is held.
// A counter's operations have distinct values (the count rises, and a new entry expires later), so an
// applied operation that equals the counter is the newest one, and the file now has what memory had.
func (s *Store) settleTrialLocked(op *ledgerOp) {
	key := op.Day + op.ID
	if c, ok := s.log.trials[key]; ok && c == opTrialCount(op) {
		delete(s.log.trials, key)
		s.log.trialSettled.Add(1)
	}
}

// applyTrial writes a trial counter's value. It never lowers what the file has (the same entry with a count
// as high, or a newer entry, which expires later), so a replayed record is harmless.
func applyTrial(tx *bbolt.Tx, op *ledgerOp) error {
	b, key, want := tx.Bucket(bucketTrial), []byte(op.Day+op.ID), opTrialCount(op)
	if c, ok := decodeTrial(b.Get(key)); ok {
		if c.expires > want.expires || c.expires == want.expires && c.count >= want.count {
			return nil
		}
	}
	return b.Put(key, encodeTrial(want))
}
