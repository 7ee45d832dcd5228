package bolt

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/payguard/payguard/store"
)

func ticketIDFree(tx *bbolt.Tx, id string) error {
	if tx.Bucket(bucketTicketIDs).Get([]byte(id)) != nil {
		return fmt.Errorf("%w: ticket %s already exists", store.ErrConflict, id)
	}
	return nil
}

// putTicket stores ticket t in tx (ticketcodec.go); its id is known to be free. Its keys are built in w.buf
// and its values kept in w.arena (batchWrites).
func (w *batchWrites) putTicket(tx *bbolt.Tx, t *store.Ticket) error {
	ids := tx.Bucket(bucketTicketIDs)
	ids.FillPercent = appendFill // ids are time-ordered
	expires := w.keep(binary.BigEndian.AppendUint64(w.buf[:0], uint64(t.ExpiresAt.UnixNano())))
	w.buf = append(w.buf[:0], t.ID...)
	if err := ids.Put(w.buf, expires); err != nil {
		return err
	}
	k, err := w.key(tx, t.Key)
	if err != nil {
		return err
	}
	seq, err := w.putTicketEntry(k, t)
	if err != nil {
		return err
	}
	index := tx.Bucket(bucketTicketExpiry)
	index.FillPercent = appendFill // expiries grow with the clock
	w.buf = append(binary.BigEndian.AppendUint64(w.buf[:0], seq), t.Key...)
	place := w.keep(w.buf)
	w.buf = appendExpiryKey(w.buf[:0], t.ExpiresAt, t.ID)
	return index.Put(w.buf, place)
}

// ReserveTicket implements store.Tickets through the ledger's write path (ledgerlog.go): it returns once
// the reservation and its ticket count and are journaled, and they reach the file in the applier's next
// commit, shared with whatever else is queued. TakeTicket waits for that commit, so the ticket's payment
// cannot be released before its reservation is durable.
func (s *Store) ReserveTicket(ctx context.Context, budget, day string, amountMicros, capMicros int64, t store.Ticket) (store.Ticket, error) {
	if err := store.CheckReserve(budget, day, amountMicros, capMicros); err != nil {
		return store.Ticket{}, err
	}
	t.Budget, t.Day, t.AmountMicros = budget, day, amountMicros
	t.ReservationID = store.NewID()
	if err := store.CheckTicket(&t); err != nil {
		return store.Ticket{}, err
	}
	if err := ctx.Err(); err != nil {
		return store.Ticket{}, err
	}
	t.ExpiresAt = t.ExpiresAt.UTC()
	if _, err := s.reserve(ctx, budget, day, t.ReservationID, amountMicros, capMicros, &t); err != nil { // reserve keeps a copy
		return store.Ticket{}, err
	}
	return t, nil
}

// TakeTicket implements store.Tickets in one write transaction: newest means stored last. The taken ticket is
// deleted.
func (s *Store) TakeTicket(ctx context.Context, key string, now time.Time) (store.Ticket, error) {
	if err := ctx.Err(); err != nil {
		return store.Ticket{}, err
	}
	// A ticket is taken only once it and its reservation are in the file (ledgerlog.go).
	if err := s.flush(ctx); err != nil {
		return store.Ticket{}, err
	}
	var got store.Ticket
	err := s.update(func(tx *bbolt.Tx) error {
		tickets := tx.Bucket(bucketTickets)
		perKey := tickets.Bucket([]byte(key))
		if perKey == nil {
			return fmt.Errorf("%w: no unused, unexpired ticket with key %q", store.ErrNotFound, key)
		}
		c := perKey.Cursor()
		for k, v := c.Last(); k != nil; k, v = c.Prev() {
			if !isTicketEntry(k) {
				continue // the shared option
			}
			t, err := decodeTicket(key, v, perKey)
			if err != nil {
				return fmt.Errorf("store/bolt: ticket under key %q is corrupt: %w", key, err)
			}
			if t.ExpiresAt.Before(now) {
				continue // left for the purge, which judges expiry by the store's clock
			}
			t.Used = true
			got = t
			return deleteTicketAt(tickets, perKey, []byte(key), k)
		}
		return nil
	})
	if err != nil {
		return store.Ticket{}, err
	}
	if got.ID == "" {
		return store.Ticket{}, fmt.Errorf("%w: no unused, unexpired ticket with key %q", store.ErrNotFound, key)
	}
	return got, nil
}

// deleteTicketAt deletes the ticket at seq in perKey, the bucket of key, and the bucket once it is empty.
func deleteTicketAt(tickets, perKey *bbolt.Bucket, key, seq []byte) error {
	if err := perKey.Delete(seq); err != nil {
		return err
	}
	c := perKey.Cursor()
	k, _ := c.First()
	if k != nil && !isTicketEntry(k) {
		k, _ = c.Next() // the shared option alone does not keep the bucket
	}
	if k == nil {
		return tickets.DeleteBucket(key)
	}
	return nil
}

// expiryKey is a ticket's key in the expiry index: the expiry (unix ns, big-endian) and the id. A time
// before 1970 sorts first (it has expired).
func expiryKey(expiresAt time.Time, id []byte) []byte {
	return appendExpiryKey(nil, expiresAt, id)
}

// appendExpiryKey appends expiryKey(expiresAt, id) to b.
func appendExpiryKey[ID []byte | string](b []byte, expiresAt time.Time, id ID) []byte {
	return append(binary.BigEndian.AppendUint64(b, uint64(max(expiresAt.UnixNano(), 0))), id...)
}

// isTicket reports whether v, an entry of perKey, is the stored ticket with that id.
func isTicket(perKey *bbolt.Bucket, v, id []byte) bool {
	if v == nil {
		return false
	}
	t, err := decodeTicket("", v, perKey)
	return err == nil && t.ID == string(id)
}

// indexTicketExpiry builds the expiry index of a file written before it existed: every ticket id kept for
// duplicate checks, with the stored ticket's place when it was not taken.
func indexTicketExpiry(tx *bbolt.Tx) error {
	index := tx.Bucket(bucketTicketExpiry)
	err := tx.Bucket(bucketTicketIDs).ForEach(func(id, v []byte) error {
		if len(v) < 8 {
			return nil
		}
		return index.Put(expiryKey(time.Unix(0, int64(binary.BigEndian.Uint64(v))), id), nil)
	})
	if err != nil {
		return err
	}
	tickets := tx.Bucket(bucketTickets)
	return tickets.ForEachBucket(func(key []byte) error {
		perKey := tickets.Bucket(key)
		return perKey.ForEach(func(seq, v []byte) error {
			if !isTicketEntry(seq) {
				return nil
			}
			t, err := decodeTicket(string(key), v, perKey)
			if err != nil {
				return nil
			}
			return index.Put(expiryKey(t.ExpiresAt, []byte(t.ID)), append(append([]byte(nil), seq...), key...))
		})
	})
}

// ForgetPaymentSeen implements store.Tickets in one write transaction (possibly shared, see write).
func (s *Store) ForgetPaymentSeen(ctx context.Context, digest string) error {
	if err := store.CheckName("payment digest", digest); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return s.write(func(tx *bbolt.Tx) error { return tx.Bucket(bucketSeen).Delete([]byte(digest)) })
}

// MarkPaymentSeen implements store.Tickets in one write transaction (possibly shared, see write); expiry is
// judged by the store's clock.
func (s *Store) MarkPaymentSeen(ctx context.Context, digest string, ttl time.Duration) error {
	if err := store.CheckName("payment digest", digest); err != nil {
		return err
	}
	if ttl <= 0 {
		return fmt.Errorf("%w: payment digest ttl %v must be positive", store.ErrInvalid, ttl)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	var seenBefore bool // a result of the committed run (see write)
	err := s.write(func(tx *bbolt.Tx) error {
		seenBefore = false
		now := s.now()
		if err := s.maybePurge(tx, now); err != nil {
			return err
		}
		seen := tx.Bucket(bucketSeen)
		if v := seen.Get([]byte(digest)); len(v) == 8 && int64(binary.BigEndian.Uint64(v)) >= now.UnixNano() {
			seenBefore = true
			return nil
		}
		return seen.Put([]byte(digest), u64(uint64(now.Add(ttl).UnixNano())))
	})
	if err != nil {
		return err
	}
	if seenBefore {
		return fmt.Errorf("%w: payment %s was seen before", store.ErrAlreadyUsed, digest)
	}
	return nil
}

// PutObservation implements store.Endpoints.
func (s *Store) PutObservation(ctx context.Context, o store.Observation, keep store.Retention) error {
	return s.PutObservations(ctx, []store.Observation{o}, keep)
}

// PutObservations writes several observations in one transaction (one fsync), checking them all first:
// the proxy's observation writer drains its queue through it (store.ObservationBatcher).
func (s *Store) PutObservations(ctx context.Context, obs []store.Observation, keep store.Retention) error {
	if err := store.CheckRetention(keep); err != nil {
		return err
	}
	vals := make([][]byte, len(obs))
	for i := range obs {
		if err := store.CheckObservation(obs[i]); err != nil {
			return err
		}
		obs[i].ObservedAt = obs[i].ObservedAt.UTC()
		v, err := json.Marshal(obs[i])
		if err != nil {
			return err
		}
		vals[i] = v
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return s.update(func(tx *bbolt.Tx) error {
		for i := range obs {
			if err := putObservationTx(tx, obs[i], vals[i], keep); err != nil {
				return err
			}
		}
		return nil
	})
}

func putObservationTx(tx *bbolt.Tx, o store.Observation, v []byte, keep store.Retention) error {
	perURL, err := tx.Bucket(bucketObservations).CreateBucketIfNotExists([]byte(o.URL))
	if err != nil {
		return err
	}
	seq, err := perURL.NextSequence()
	if err != nil {
		return err
	}
	if err := perURL.Put(u64(seq), v); err != nil {
		return err
	}
	if err := trimObservations(perURL, o.ObservedAt, keep); err != nil {
		return err
	}
	meta := tx.Bucket(bucketMeta)
	var cur time.Time
	if b := meta.Get(keyIndexUpdatedAt); b != nil {
		if err := cur.UnmarshalBinary(b); err != nil {
			return fmt.Errorf("store/bolt: index time is corrupt: %w", err)
		}
	}
	if !o.ObservedAt.After(cur) {
		return nil
	}
	b, err := o.ObservedAt.MarshalBinary()
	if err != nil {
		return err
	}
	return meta.Put(keyIndexUpdatedAt, b)
}

// keyObsCount holds a URL bucket's number of observations (entries are keyed by 8-byte sequences).
var keyObsCount = []byte("count")

// trimObservations counts the entry just put and deletes the oldest-put entries while there are more than
// keep.MaxPerURL or the oldest is older than keep.MaxAge before newest.
func trimObservations(b *bbolt.Bucket, newest time.Time, keep store.Retention) error {
	n := uint64(0)
	if c := b.Get(keyObsCount); len(c) == 8 {
		n = binary.BigEndian.Uint64(c)
	} else {
		// A bucket from before the count existed: count it once.
		_ = b.ForEach(func(k, _ []byte) error {
			if len(k) == 8 {
				n++
			}
			return nil
		})
		n-- // the entry just put is added below
	}
	n++
	cutoff := time.Time{}
	if keep.MaxAge > 0 {
		cutoff = newest.Add(-keep.MaxAge)
	}
	c := b.Cursor()
	// Sequence keys start with 0x00 for any real count, so they sort before keyObsCount.
	for k, v := c.First(); len(k) == 8 && n > 0; k, v = c.First() {
		over := keep.MaxPerURL > 0 && n > uint64(keep.MaxPerURL)
		if !over && !cutoff.IsZero() {
			var head struct {
				ObservedAt time.Time `json:"observed_at"`
			}
			over = json.Unmarshal(v, &head) == nil && head.ObservedAt.Before(cutoff)
		}
		if !over {
			break
		}
		if err := b.Delete(k); err != nil {
			return err
		}
		n--
	}
	return b.Put(keyObsCount, u64(n))
}

// Observations implements store.Endpoints: every method's observations of url, oldest first (put order
// breaks ties).
func (s *Store) Observations(ctx context.Context, url string) ([]store.Observation, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := []store.Observation{}
	err := s.db.View(func(tx *bbolt.Tx) error {
		perURL := tx.Bucket(bucketObservations).Bucket([]byte(url))
		if perURL == nil {
			return nil
		}
		return perURL.ForEach(func(k, v []byte) error {
			if len(k) != 8 {
				return nil // keyObsCount
			}
			var o store.Observation
			if err := json.Unmarshal(v, &o); err != nil {
				return fmt.Errorf("store/bolt: observation of %s is corrupt: %w", url, err)
			}
			out = append(out, o)
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].ObservedAt.Before(out[j].ObservedAt) })
	return out, nil
}

// IndexUpdatedAt implements store.Endpoints.
func (s *Store) IndexUpdatedAt(ctx context.Context) (time.Time, error) {
	if err := ctx.Err(); err != nil {
		return time.Time{}, err
	}
	var at time.Time
	err := s.db.View(func(tx *bbolt.Tx) error {
		if b := tx.Bucket(bucketMeta).Get(keyIndexUpdatedAt); b != nil {
			return at.UnmarshalBinary(b)
		}
		return nil
	})
	return at, err
}
