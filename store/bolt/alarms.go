package bolt

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"go.etcd.io/bbolt"

	"github.com/payguard/payguard/store"
)

// RaiseAlarm implements store.Alarms in one write transaction: host → Alarm JSON, the oldest alarm
// forgotten first once store.MaxAlarms are kept.
func (s *Store) RaiseAlarm(ctx context.Context, a store.Alarm) error {
	if err := store.CheckAlarm(a); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	v, err := json.Marshal(a)
	if err != nil {
		return err
	}
	s.noAlarms.Store(false) // before the write: no read after it may skip the bucket (noAlarms)
	return s.write(func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucketAlarms)
		if b.Get([]byte(a.Host)) == nil && b.Stats().KeyN >= store.MaxAlarms {
			var oldest []byte
			var at time.Time
			if err := b.ForEach(func(k, v []byte) error {
				var x store.Alarm
				if json.Unmarshal(v, &x) != nil || oldest == nil || x.At.Before(at) {
					oldest, at = append([]byte(nil), k...), x.At
				}
				return nil
			}); err != nil {
				return err
			}
			if err := b.Delete(oldest); err != nil {
				return err
			}
		}
		return b.Put([]byte(a.Host), v)
	})
}

// Alarm implements store.Alarms in one read transaction.
func (s *Store) Alarm(ctx context.Context, host string, now time.Time) (store.Alarm, error) {
	if err := ctx.Err(); err != nil {
		return store.Alarm{}, err
	}
	if s.noAlarms.Load() {
		return store.Alarm{}, store.ErrNotFound
	}
	var a store.Alarm
	found := false
	err := s.db.View(func(tx *bbolt.Tx) error {
		v := tx.Bucket(bucketAlarms).Get([]byte(host))
		if v == nil {
			return nil
		}
		if err := json.Unmarshal(v, &a); err != nil {
			return fmt.Errorf("store/bolt: alarm of %s unreadable: %w", host, err)
		}
		found = true
		return nil
	})
	if err != nil {
		return store.Alarm{}, err
	}
	if !found || !now.Before(a.Until) {
		return store.Alarm{}, store.ErrNotFound
	}
	return a, nil
}

// ClearAlarm implements store.Alarms.
func (s *Store) ClearAlarm(ctx context.Context, host string, now time.Time) error {
	if _, err := s.Alarm(ctx, host, now); err != nil {
		return err
	}
	return s.write(func(tx *bbolt.Tx) error { return tx.Bucket(bucketAlarms).Delete([]byte(host)) })
}

// ListAlarms implements store.Alarms in one read transaction; expired alarms are skipped (and overwritten or
// forgotten by later raises).
func (s *Store) ListAlarms(ctx context.Context, now time.Time) ([]store.Alarm, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := []store.Alarm{}
	err := s.db.View(func(tx *bbolt.Tx) error {
		return tx.Bucket(bucketAlarms).ForEach(func(k, v []byte) error {
			var a store.Alarm
			if err := json.Unmarshal(v, &a); err != nil {
				return fmt.Errorf("store/bolt: alarm of %s unreadable: %w", k, err)
			}
			if now.Before(a.Until) {
				out = append(out, a)
			}
			return nil
		})
	})
	return out, err
}
