package redis

import (
	"context"
	"fmt"

	"github.com/payguard/payguard/store"
)

// markSellerScript: KEYS sellers set; ARGV host, max. SADD under the epoch guard while the set holds fewer
// than max hosts (past it IsSeller is true for every host).
var markSellerScript = guarded(`
if redis.call('SISMEMBER', KEYS[1], ARGV[1]) == 1 then return 0 end
if redis.call('SCARD', KEYS[1]) >= tonumber(ARGV[2]) then return 0 end
return redis.call('SADD', KEYS[1], ARGV[1])
`)

// isSellerScript: KEYS sellers set; ARGV host, max. 1 when the host is remembered or the set is full. Under
// the epoch guard: a wiped Redis has forgotten its sellers too, and must not answer "not a seller".
var isSellerScript = guarded(`
if redis.call('SISMEMBER', KEYS[1], ARGV[1]) == 1 then return 1 end
if redis.call('SCARD', KEYS[1]) >= tonumber(ARGV[2]) then return 1 end
return 0
`)

// MarkSeller implements store.Sellers in one script.
func (s *Store) MarkSeller(ctx context.Context, host string) error {
	if err := store.CheckName("seller host", host); err != nil {
		return err
	}
	if err := s.run(ctx, markSellerScript, []string{s.key("sellers")}, host, store.MaxSellerHosts).Err(); err != nil {
		return fmt.Errorf("store/redis: mark seller: %w", s.lost(err))
	}
	return nil
}

// IsSeller implements store.Sellers in one script.
func (s *Store) IsSeller(ctx context.Context, host string) (bool, error) {
	if err := store.CheckName("seller host", host); err != nil {
		return false, err
	}
	n, err := s.run(ctx, isSellerScript, []string{s.key("sellers")}, host, store.MaxSellerHosts).Int()
	if err != nil {
		return false, fmt.Errorf("store/redis: is seller: %w", s.lost(err))
	}
	return n == 1, nil
}
