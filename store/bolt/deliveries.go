package bolt

import (
	"context"
	"encoding/binary"
	"fmt"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/payguard/payguard/store"
)

// PutDelivery implements store.Deliveries in one write transaction (possibly shared, see write): the value
// followed by its expiry (unix ns, uint64 BE), swept with the other expiring records.
func (s *Store) PutDelivery(ctx context.Context, key string, value []byte, ttl time.Duration) error {
	if err := store.CheckDelivery(key, value, ttl); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return s.write(func(tx *bbolt.Tx) error {
		now := s.now()
		if err := s.maybePurge(tx, now); err != nil {
			return err
		}
		v := binary.BigEndian.AppendUint64(append(make([]byte, 0, len(value)+8), value...), uint64(now.Add(ttl).UnixNano()))
		return tx.Bucket(bucketDeliveries).Put([]byte(key), v)
	})
}

// GetDelivery implements store.Deliveries; expiry is judged by the store's clock.
func (s *Store) GetDelivery(ctx context.Context, key string) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var out []byte
	err := s.db.View(func(tx *bbolt.Tx) error {
		v := tx.Bucket(bucketDeliveries).Get([]byte(key))
		if len(v) < 8 || int64(binary.BigEndian.Uint64(v[len(v)-8:])) < s.now().UnixNano() {
			return fmt.Errorf("%w: no delivery %q", store.ErrNotFound, key)
		}
		out = append([]byte(nil), v[:len(v)-8]...)
		return nil
	})
	return out, err
}
