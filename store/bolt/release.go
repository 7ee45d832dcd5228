package bolt

// Releasing the reservations of tickets that expired unused (store.Tickets: a ReserveTicket reservation is a
// lease). A release runs under ledgerLog.mu, in its own write transaction: under mu because the in-memory
// figures of budgets with queued operations must drop by what the file drops, with no decision reading
// either in between; in a transaction of its own because TakeTicket's transaction deletes the ticket it
// takes, and bbolt runs write transactions one at a time, so a ticket is released or taken, never both.
// The expiry index (ticketexpiry) names what is due, oldest first, so finding nothing costs one read, and
// l.nextRelease (a hint) skips even that until the oldest ticket known is due.

import (
	"context"
	"encoding/binary"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/payguard/payguard/store"
)

// released is one reservation a release gave back, for the in-memory figures.
type released struct {
	budgetKey string
	amount    int64
}

// releaseLocked releases the reservations of the tickets that expired unused more than
// store.TicketReleaseGrace before now, deleting those tickets and the ids of expired tickets that were
// taken; l.mu is held. It reports how many reservations it released.
func (s *Store) releaseLocked(now time.Time) (int, error) {
	l := &s.log
	cutoff := now.Add(-store.TicketReleaseGrace).UnixNano()
	if l.nextRelease != 0 && l.nextRelease >= cutoff {
		return 0, nil
	}
	if err := s.usableLocked(); err != nil {
		return 0, err
	}
	due := false
	next := int64(0)
	_ = s.db.View(func(tx *bbolt.Tx) error {
		if k, _ := tx.Bucket(bucketTicketExpiry).Cursor().First(); len(k) >= 8 {
			next = int64(binary.BigEndian.Uint64(k))
			due = next < cutoff
		} else {
			next = 1<<63 - 1 // none: the next ReserveTicket lowers it
		}
		return nil
	})
	if !due {
		l.nextRelease = s.queuedTicketsBefore(next)
		return 0, nil
	}
	var out []released
	err := s.update(func(tx *bbolt.Tx) error {
		out = out[:0]
		var err error
		out, next, err = s.releaseTx(tx, cutoff)
		return err
	})
	if err != nil {
		return 0, err
	}
	for _, r := range out {
		if f := l.budgets[r.budgetKey]; f != nil {
			f.reserved -= r.amount
		}
	}
	l.nextRelease = s.queuedTicketsBefore(next)
	return len(out), nil
}

// releaseDueLocked is releaseLocked for a caller that may wait (State, a refused reservation): a ticket due
// but still queued is not in the file yet, so it first waits for the queue to be applied; l.mu is held on
// entry and on return, and released while waiting.
func (s *Store) releaseDueLocked(ctx context.Context, now time.Time) (int, error) {
	l := &s.log
	cutoff := now.Add(-store.TicketReleaseGrace).UnixNano()
	if l.nextRelease != 0 && l.nextRelease >= cutoff {
		return 0, nil
	}
	if s.queuedTicketsBefore(1<<63-1) < cutoff {
		last := l.last
		l.mu.Unlock()
		err := s.wait(ctx, last)
		l.mu.Lock()
		if err != nil {
			return 0, err
		}
	}
	return s.releaseLocked(now)
}

// releaseTx is releaseLocked's transaction: every index entry due before cutoff (unix ns) goes, with its
// ticket if it was not taken, and that ticket's reservation is released. It returns the releases and the
// expiry of the oldest entry left (max int64 when none).
func (s *Store) releaseTx(tx *bbolt.Tx, cutoff int64) ([]released, int64, error) {
	index, tickets, ids := tx.Bucket(bucketTicketExpiry), tx.Bucket(bucketTickets), tx.Bucket(bucketTicketIDs)
	budgets, res := tx.Bucket(bucketBudgets), tx.Bucket(bucketReservations)
	type entry struct{ k, v []byte }
	var dead []entry
	next := int64(1<<63 - 1)
	c := index.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if len(k) >= 8 && int64(binary.BigEndian.Uint64(k)) >= cutoff {
			next = int64(binary.BigEndian.Uint64(k))
			break
		}
		dead = append(dead, entry{append([]byte(nil), k...), append([]byte(nil), v...)})
	}
	var out []released
	for _, e := range dead {
		if err := index.Delete(e.k); err != nil {
			return nil, 0, err
		}
		if len(e.k) < 8 {
			continue
		}
		if err := ids.Delete(e.k[8:]); err != nil {
			return nil, 0, err
		}
		if len(e.v) < 8 {
			continue // an id indexed without its ticket's place (a file from before the index): taken
		}
		ticketKey, seq := e.v[8:], e.v[:8]
		perKey := tickets.Bucket(ticketKey)
		if perKey == nil {
			continue // taken
		}
		v := perKey.Get(seq)
		// The place may hold a newer ticket with the same key: a per-key bucket emptied by TakeTicket is
		// deleted, and its successor's sequence starts again at 1.
		if !isTicket(perKey, v, e.k[8:]) {
			continue
		}
		t, err := decodeTicket(string(ticketKey), v, perKey)
		if err != nil {
			continue // isTicket read it; a ticket this damaged keeps its reservation (the safe side)
		}
		if err := deleteTicketAt(tickets, perKey, ticketKey, seq); err != nil {
			return nil, 0, err
		}
		if r := s.log.reservations[resRef{t.Day, t.ReservationID}]; r != nil && r.committed {
			continue // a commit is queued for it (no payment flow does this): it is spent, not released
		}
		resKey := []byte(t.Day + t.ReservationID)
		rec := res.Get(resKey)
		if len(rec) < 9 || rec[8] != resOpen {
			continue
		}
		amount := int64(binary.BigEndian.Uint64(rec[:8]))
		bk := rec[9:]
		spent, reserved := readBudget(budgets, bk)
		if err := writeBudget(budgets, bk, spent, reserved-amount); err != nil {
			return nil, 0, err
		}
		gone := append([]byte(nil), rec...)
		gone[8] = resReleased
		if err := res.Put(resKey, gone); err != nil {
			return nil, 0, err
		}
		out = append(out, released{budgetKey: string(bk), amount: amount})
	}
	return out, next, nil
}

// queuedTicketsBefore is the earliest expiry (unix ns) among next and the tickets queued but not yet in the
// file; l.mu is held.
func (s *Store) queuedTicketsBefore(next int64) int64 {
	if len(s.log.ticketIDs) == 0 {
		return next
	}
	for _, op := range s.log.queue {
		if op.ticket != nil {
			next = min(next, max(op.ticket.ExpiresAt.UnixNano(), 1))
		}
	}
	return next
}

// Reservation record states (byte 8 of a reservations value).
const (
	resOpen      = 0
	resCommitted = 1
	resReleased  = 2 // a lease whose ticket expired unused: counted nowhere, unknown to Commit
)

// noteTicketLocked lowers the release hint to a new ticket's expiry; l.mu is held.
func (s *Store) noteTicketLocked(expiresAt time.Time) {
	if ns := expiresAt.UnixNano(); s.log.nextRelease == 0 || ns < s.log.nextRelease {
		s.log.nextRelease = max(ns, 1)
	}
}

// releasePeriodicallyLocked runs a release at most once per purgeEvery, for the applier (after a batch, or
// idle), so that expired tickets leave the file even when no decision asks; l.mu is held. Its failure is
// left to the next try: a failing disk stops the ledger at its next commit.
func (s *Store) releasePeriodicallyLocked() {
	now := s.now()
	if now.Sub(s.log.lastRelease) < purgeEvery {
		return
	}
	s.log.lastRelease = now
	_, _ = s.releaseLocked(now)
}
