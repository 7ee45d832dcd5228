package bolt

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/payguard/payguard/store"
)

// holdRecord is a stored hold; Seq is its creation order, which breaks CreatedAt ties in FindHold and
// orders ListHolds.
type holdRecord struct {
	Seq  uint64     `json:"seq"`
	Hold store.Hold `json:"hold"`
}

func getHold(tx *bbolt.Tx, id string) (holdRecord, error) {
	var r holdRecord
	v := tx.Bucket(bucketHolds).Get([]byte(id))
	if v == nil {
		return r, fmt.Errorf("%w: hold %q", store.ErrNotFound, id)
	}
	if err := json.Unmarshal(v, &r); err != nil {
		return r, fmt.Errorf("store/bolt: hold %q is corrupt: %w", id, err)
	}
	return r, nil
}

func putHold(tx *bbolt.Tx, r holdRecord) error {
	v, err := json.Marshal(r)
	if err != nil {
		return err
	}
	return tx.Bucket(bucketHolds).Put([]byte(r.Hold.ID), v)
}

func utcHold(h store.Hold) store.Hold {
	h.CreatedAt, h.ExpiresAt, h.ResolvedAt = h.CreatedAt.UTC(), h.ExpiresAt.UTC(), h.ResolvedAt.UTC()
	return h
}

// CreateHold implements store.Holds; a duplicate id is ErrConflict.
func (s *Store) CreateHold(ctx context.Context, h store.Hold) error {
	if err := store.CheckNewHold(&h); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	h = utcHold(h)
	return s.update(func(tx *bbolt.Tx) error {
		holds := tx.Bucket(bucketHolds)
		if holds.Get([]byte(h.ID)) != nil {
			return fmt.Errorf("%w: hold %s already exists", store.ErrConflict, h.ID)
		}
		seq, err := holds.NextSequence()
		if err != nil {
			return err
		}
		if err := putHold(tx, holdRecord{Seq: seq, Hold: h}); err != nil {
			return err
		}
		keys := tx.Bucket(bucketHoldKeys)
		if cur := keys.Get([]byte(h.Key)); cur != nil {
			newest, err := getHold(tx, string(cur))
			if err != nil {
				return err
			}
			if h.CreatedAt.Before(newest.Hold.CreatedAt) {
				return nil // an older hold created late does not replace the newest
			}
		}
		return keys.Put([]byte(h.Key), []byte(h.ID))
	})
}

// GetHold implements store.Holds.
func (s *Store) GetHold(ctx context.Context, id string) (store.Hold, error) {
	if err := ctx.Err(); err != nil {
		return store.Hold{}, err
	}
	var r holdRecord
	err := s.db.View(func(tx *bbolt.Tx) (err error) { r, err = getHold(tx, id); return err })
	return r.Hold, err
}

// FindHold implements store.Holds: the hold with that key and the latest CreatedAt; among equal times the
// one created last.
func (s *Store) FindHold(ctx context.Context, key string) (store.Hold, error) {
	if err := ctx.Err(); err != nil {
		return store.Hold{}, err
	}
	var r holdRecord
	err := s.db.View(func(tx *bbolt.Tx) (err error) {
		id := tx.Bucket(bucketHoldKeys).Get([]byte(key))
		if id == nil {
			return fmt.Errorf("%w: no hold with key %q", store.ErrNotFound, key)
		}
		r, err = getHold(tx, string(id))
		return err
	})
	return r.Hold, err
}

// ListHolds implements store.Holds, in creation order.
func (s *Store) ListHolds(ctx context.Context, status string) ([]store.Hold, error) {
	if err := store.CheckHoldStatus(status); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var recs []holdRecord
	err := s.db.View(func(tx *bbolt.Tx) error {
		return tx.Bucket(bucketHolds).ForEach(func(k, v []byte) error {
			var r holdRecord
			if err := json.Unmarshal(v, &r); err != nil {
				return fmt.Errorf("store/bolt: hold %q is corrupt: %w", k, err)
			}
			if status == "" || r.Hold.Status == status {
				recs = append(recs, r)
			}
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(recs, func(i, j int) bool { return recs[i].Seq < recs[j].Seq })
	out := make([]store.Hold, len(recs))
	for i, r := range recs {
		out[i] = r.Hold
	}
	return out, nil
}

// ResolveHold implements store.Holds (see store.ApplyResolve).
func (s *Store) ResolveHold(ctx context.Context, id, status, by, note string, at time.Time) (store.Hold, error) {
	return s.updateHold(ctx, id, func(h store.Hold) (store.Hold, bool, error) {
		return store.ApplyResolve(h, status, by, note, at)
	})
}

// UseHold implements store.Holds (see store.ApplyUse); expiry is judged by the store's clock.
func (s *Store) UseHold(ctx context.Context, id string) (store.Hold, error) {
	return s.updateHold(ctx, id, func(h store.Hold) (store.Hold, bool, error) {
		return store.ApplyUse(h, s.now())
	})
}

// updateHold applies a transition in one write transaction. A refused transition that still changed the
// hold (to expired) is committed, and its error returned after the commit.
func (s *Store) updateHold(ctx context.Context, id string, apply func(store.Hold) (store.Hold, bool, error)) (store.Hold, error) {
	if err := ctx.Err(); err != nil {
		return store.Hold{}, err
	}
	var out store.Hold
	var refused error
	err := s.update(func(tx *bbolt.Tx) error {
		r, err := getHold(tx, id)
		if err != nil {
			return err
		}
		next, changed, err := apply(r.Hold)
		refused = err
		if !changed {
			return nil
		}
		r.Hold, out = utcHold(next), utcHold(next)
		return putHold(tx, r)
	})
	if err != nil {
		return store.Hold{}, err
	}
	if refused != nil {
		return store.Hold{}, refused
	}
	return out, nil
}
