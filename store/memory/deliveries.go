package memory

import (
	"context"
	"fmt"
	"time"

	"github.com/payguard/payguard/store"
)

type delivery struct {
	value   []byte
	expires time.Time
}

// PutDelivery implements store.Deliveries.
func (s *Store) PutDelivery(ctx context.Context, key string, value []byte, ttl time.Duration) error {
	if err := store.CheckDelivery(key, value, ttl); err != nil {
		return err
	}
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.mu.Unlock()
	s.purgeLocked()
	s.deliveries[key] = delivery{value: append([]byte(nil), value...), expires: s.now().Add(ttl)}
	return nil
}

// GetDelivery implements store.Deliveries.
func (s *Store) GetDelivery(ctx context.Context, key string) ([]byte, error) {
	if err := s.lock(ctx); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	d, ok := s.deliveries[key]
	if !ok || d.expires.Before(s.now()) {
		return nil, fmt.Errorf("%w: no delivery %q", store.ErrNotFound, key)
	}
	return append([]byte(nil), d.value...), nil
}
