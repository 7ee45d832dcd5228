package redis

import (
	"context"
	"errors"
	"fmt"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/payguard/payguard/store"
)

// putDeliveryScript: KEYS delivery:<key>; ARGV value, ttl ms. SET PX under the epoch guard.
var putDeliveryScript = guarded(`
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
`)

// PutDelivery implements store.Deliveries; expiry is Redis's.
func (s *Store) PutDelivery(ctx context.Context, key string, value []byte, ttl time.Duration) error {
	if err := store.CheckDelivery(key, value, ttl); err != nil {
		return err
	}
	if err := s.run(ctx, putDeliveryScript, []string{s.key("delivery:", key)}, value, millis(ttl)).Err(); err != nil {
		return fmt.Errorf("store/redis: put delivery: %w", s.lost(err))
	}
	return nil
}

// GetDelivery implements store.Deliveries, refused after a wipe (epochAnd) like every read.
func (s *Store) GetDelivery(ctx context.Context, key string) ([]byte, error) {
	var get *goredis.StringCmd
	if err := s.epochAnd(ctx, func(p goredis.Pipeliner) { get = p.Get(ctx, s.key("delivery:", key)) }); err != nil {
		return nil, fmt.Errorf("store/redis: get delivery: %w", err)
	}
	v, err := get.Bytes()
	if errors.Is(err, goredis.Nil) {
		return nil, fmt.Errorf("%w: no delivery %q", store.ErrNotFound, key)
	}
	if err != nil {
		return nil, fmt.Errorf("store/redis: get delivery: %w", err)
	}
	return v, nil
}
