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

// putTicketTx stores ticket t, encoded as v, in tx; its id is known to be free.
func putTicketTx(tx *bbolt.Tx, t *store.Ticket, v []byte) error {
	if err := tx.Bucket(bucketTicketIDs).Put([]byte(t.ID), u64(uint64(t.ExpiresAt.UnixNano()))); err != nil {
		return err
	}
	perKey, err := tx.Bucket(bucketTickets).CreateBucketIfNotExists([]byte(t.Key))
	if err != nil {
		return err
	}
	seq, err := perKey.NextSequence()
	if err != nil {
		return err
	}
	return perKey.Put(u64(seq), v)
}

// ReserveTicket implements store.Tickets in one write transaction (possibly shared, see write): one commit
// and fsync for the reservation and its ticket.
func (s *Store) ReserveTicket(ctx context.Context, budget, day string, amountMicros, capMicros int64, t store.Ticket) (store.Ticket, error) {
	if err := store.CheckReserve(budget, day, amountMicros, capMicros); err != nil {
		return store.Ticket{}, err
	}
	t.Budget, t.Day, t.AmountMicros = budget, day, amountMicros
	t.ReservationID = store.NewID() // chosen once: every run of the function below writes the same records
	if err := store.CheckTicket(&t); err != nil {
		return store.Ticket{}, err
	}
	if err := ctx.Err(); err != nil {
		return store.Ticket{}, err
	}
	t.ExpiresAt = t.ExpiresAt.UTC()
	v, err := json.Marshal(t)
	if err != nil {
		return store.Ticket{}, err
	}
	var refused error // over the cap, as the committed run found it (see write)
	err = s.write(func(tx *bbolt.Tx) error {
		if err := s.maybePurge(tx, s.now()); err != nil {
			return err
		}
		if err := ticketIDFree(tx, t.ID); err != nil {
			return err
		}
		var err error
		if refused, err = reserveTx(tx, budget, day, t.ReservationID, amountMicros, capMicros); err != nil || refused != nil {
			return err
		}
		return putTicketTx(tx, &t, v)
	})
	if err != nil {
		return store.Ticket{}, err
	}
	if refused != nil {
		return store.Ticket{}, refused
	}
	return t, nil
}

// TakeTicket implements store.Tickets in one write transaction: newest means stored last. The taken ticket is
// deleted.
func (s *Store) TakeTicket(ctx context.Context, key string, now time.Time) (store.Ticket, error) {
	if err := ctx.Err(); err != nil {
		return store.Ticket{}, err
	}
	var got store.Ticket
	err := s.db.Update(func(tx *bbolt.Tx) error {
		tickets := tx.Bucket(bucketTickets)
		perKey := tickets.Bucket([]byte(key))
		if perKey == nil {
			return fmt.Errorf("%w: no unused, unexpired ticket with key %q", store.ErrNotFound, key)
		}
		c := perKey.Cursor()
		for k, v := c.Last(); k != nil; k, v = c.Prev() {
			var t store.Ticket
			if err := json.Unmarshal(v, &t); err != nil {
				return fmt.Errorf("store/bolt: ticket under key %q is corrupt: %w", key, err)
			}
			if t.ExpiresAt.Before(now) {
				continue // left for the purge, which judges expiry by the store's clock
			}
			t.Used = true
			got = t
			if err := perKey.Delete(k); err != nil {
				return err
			}
			if k, _ := perKey.Cursor().First(); k == nil {
				return tickets.DeleteBucket([]byte(key))
			}
			return nil
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

// purgeTickets deletes tickets that expired before now.
func purgeTickets(tickets *bbolt.Bucket, now time.Time) error {
	var emptyKeys [][]byte
	err := tickets.ForEachBucket(func(key []byte) error {
		perKey := tickets.Bucket(key)
		var dead [][]byte
		err := perKey.ForEach(func(k, v []byte) error {
			var t store.Ticket
			if json.Unmarshal(v, &t) != nil || t.ExpiresAt.Before(now) {
				dead = append(dead, append([]byte(nil), k...))
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, k := range dead {
			if err := perKey.Delete(k); err != nil {
				return err
			}
		}
		if k, _ := perKey.Cursor().First(); k == nil {
			emptyKeys = append(emptyKeys, append([]byte(nil), key...))
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, key := range emptyKeys {
		if err := tickets.DeleteBucket(key); err != nil {
			return err
		}
	}
	return nil
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

// TakeTrial implements store.Trial in one write transaction (possibly shared, see write). The entry expires retention after the day's
// first call; expired entries are purged lazily.
func (s *Store) TakeTrial(ctx context.Context, client, day string, limit int, retention time.Duration) (bool, int, error) {
	if err := store.CheckTrial(client, day, retention); err != nil {
		return false, 0, err
	}
	if err := ctx.Err(); err != nil {
		return false, 0, err
	}
	var ok bool
	var used int
	err := s.write(func(tx *bbolt.Tx) error {
		ok, used = false, 0 // results of the committed run only (see write)
		now := s.now()
		if err := s.maybePurge(tx, now); err != nil {
			return err
		}
		trial, key := tx.Bucket(bucketTrial), []byte(day+client)
		count, expires := uint64(0), now.Add(retention).UnixNano()
		if v := trial.Get(key); len(v) == 16 && int64(binary.BigEndian.Uint64(v[8:])) >= now.UnixNano() {
			count, expires = binary.BigEndian.Uint64(v[:8]), int64(binary.BigEndian.Uint64(v[8:]))
		}
		used = int(count)
		if limit <= 0 || count >= uint64(limit) {
			return nil
		}
		ok, used = true, used+1
		v := binary.BigEndian.AppendUint64(u64(count+1), uint64(expires))
		return trial.Put(key, v)
	})
	if err != nil {
		return false, 0, err
	}
	return ok, used, nil
}

// PutObservation implements store.Endpoints.
func (s *Store) PutObservation(ctx context.Context, o store.Observation) error {
	if err := store.CheckObservation(o); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	o.ObservedAt = o.ObservedAt.UTC()
	v, err := json.Marshal(o)
	if err != nil {
		return err
	}
	return s.db.Update(func(tx *bbolt.Tx) error {
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
	})
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
		return perURL.ForEach(func(_, v []byte) error {
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
