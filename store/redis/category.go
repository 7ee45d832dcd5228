package redis

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/payguard/payguard/store"
)

// A category's price sample is one hash, URL → CategoryPrice JSON, expiring MaxAge after its last put.
// Both scripts run under the ledger epoch guard, like the sellers set: a wiped Redis has lost its sample.

// putCategoryScript: KEYS hash; ARGV url, entry, ttl ms (0 = none), then the URLs to remove.
var putCategoryScript = guarded(`
for i = 4, #ARGV do redis.call('HDEL', KEYS[1], ARGV[i]) end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
if tonumber(ARGV[3]) > 0 then redis.call('PEXPIRE', KEYS[1], ARGV[3]) end
return 1
`)

// readCategoryScript: KEYS hash. Every entry's value.
var readCategoryScript = guarded(`
return redis.call('HVALS', KEYS[1])
`)

// PutCategoryPrice implements store.CategoryPrices. The bounds are applied to the sample as read just
// before: two replicas putting to one category at once can leave it a few entries over them until the next
// put trims it (the median counts each host once whatever the count).
func (s *Store) PutCategoryPrice(ctx context.Context, category string, p store.CategoryPrice, keep store.Retention) error {
	if err := store.CheckCategoryPrice(category, p); err != nil {
		return err
	}
	if err := store.CheckRetention(keep); err != nil {
		return err
	}
	p.At = p.At.UTC()
	v, err := json.Marshal(p)
	if err != nil {
		return err
	}
	list, err := s.CategoryPrices(ctx, category)
	if err != nil {
		return err
	}
	_, removed := store.TrimCategory(list, p, keep)
	ttl := int64(0)
	if keep.MaxAge > 0 {
		ttl = millis(keep.MaxAge)
	}
	args := []any{p.URL, v, ttl}
	for _, u := range removed {
		args = append(args, u)
	}
	if err := s.run(ctx, putCategoryScript, []string{s.key("catprice:", category)}, args...).Err(); err != nil {
		return fmt.Errorf("store/redis: put category price of %s: %w", p.URL, s.lost(err))
	}
	return nil
}

// CategoryPrices implements store.CategoryPrices.
func (s *Store) CategoryPrices(ctx context.Context, category string) ([]store.CategoryPrice, error) {
	raws, err := s.run(ctx, readCategoryScript, []string{s.key("catprice:", category)}).StringSlice()
	if err != nil {
		return nil, fmt.Errorf("store/redis: category prices of %q: %w", category, s.lost(err))
	}
	out := make([]store.CategoryPrice, 0, len(raws))
	for _, raw := range raws {
		var p store.CategoryPrice
		if err := json.Unmarshal([]byte(raw), &p); err != nil {
			return nil, fmt.Errorf("store/redis: category price in %q is corrupt: %w", category, err)
		}
		out = append(out, p)
	}
	return out, nil
}

var _ store.CategoryPrices = (*Store)(nil)
