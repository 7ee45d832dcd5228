package redis

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/payguard/payguard/store"
)

// Holds: hold:<id> is the hold's JSON; holdkey:<key> is the newest hold with that key, as
// sortable(CreatedAt) followed by its id; holdorder lists ids in creation order.

// createHoldScript: KEYS hold:<id>, holdkey:<key>, holdorder; ARGV json, id, sortable(CreatedAt).
var createHoldScript = guarded(`
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('SET', KEYS[1], ARGV[1])
redis.call('RPUSH', KEYS[3], ARGV[2])
local cur = redis.call('GET', KEYS[2])
if (not cur) or string.sub(cur, 1, 20) <= ARGV[3] then
  redis.call('SET', KEYS[2], ARGV[3] .. ARGV[2])
end
return 1
`)

// casScript: KEYS[1]; ARGV old, new. Sets the key to new only if it still holds old.
var casScript = guarded(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2])
return 1
`)

// maxCASAttempts bounds the retries of a hold transition that keeps losing races; each lost race means
// another caller changed the hold, so a handful always suffice in practice.
const maxCASAttempts = 100

func (s *Store) holdKey(id string) string { return s.key("hold:", id) }

func utcHold(h store.Hold) store.Hold {
	h.CreatedAt, h.ExpiresAt, h.ResolvedAt = h.CreatedAt.UTC(), h.ExpiresAt.UTC(), h.ResolvedAt.UTC()
	return h
}

// CreateHold implements store.Holds; a duplicate id is ErrConflict.
func (s *Store) CreateHold(ctx context.Context, h store.Hold) error {
	if err := store.CheckNewHold(&h); err != nil {
		return err
	}
	h = utcHold(h)
	v, err := json.Marshal(h)
	if err != nil {
		return err
	}
	keys := []string{s.holdKey(h.ID), s.key("holdkey:", h.Key), s.key("holdorder")}
	n, err := s.run(ctx, createHoldScript, keys, v, h.ID, sortable(h.CreatedAt)).Int()
	if err != nil {
		return fmt.Errorf("store/redis: create hold %s: %w", h.ID, s.lost(err))
	}
	if n != 1 {
		return fmt.Errorf("%w: hold %s already exists", store.ErrConflict, h.ID)
	}
	return nil
}

// getHold returns the hold and its raw JSON (for compare-and-set).
func (s *Store) getHold(ctx context.Context, id string) (store.Hold, string, error) {
	var get *goredis.StringCmd
	if err := s.epochAnd(ctx, func(p goredis.Pipeliner) { get = p.Get(ctx, s.holdKey(id)) }); err != nil {
		return store.Hold{}, "", fmt.Errorf("store/redis: get hold %s: %w", id, err)
	}
	raw, err := get.Result()
	if errors.Is(err, goredis.Nil) {
		return store.Hold{}, "", fmt.Errorf("%w: hold %q", store.ErrNotFound, id)
	}
	if err != nil {
		return store.Hold{}, "", fmt.Errorf("store/redis: get hold %s: %w", id, err)
	}
	var h store.Hold
	if err := json.Unmarshal([]byte(raw), &h); err != nil {
		return store.Hold{}, "", fmt.Errorf("store/redis: hold %q is corrupt: %w", id, err)
	}
	return h, raw, nil
}

// GetHold implements store.Holds.
func (s *Store) GetHold(ctx context.Context, id string) (store.Hold, error) {
	h, _, err := s.getHold(ctx, id)
	return h, err
}

// FindHold implements store.Holds: the hold with that key and the latest CreatedAt; among equal times the
// one created last.
func (s *Store) FindHold(ctx context.Context, key string) (store.Hold, error) {
	var get *goredis.StringCmd
	if err := s.epochAnd(ctx, func(p goredis.Pipeliner) { get = p.Get(ctx, s.key("holdkey:", key)) }); err != nil {
		return store.Hold{}, fmt.Errorf("store/redis: find hold %q: %w", key, err)
	}
	cur, err := get.Result()
	if errors.Is(err, goredis.Nil) {
		return store.Hold{}, fmt.Errorf("%w: no hold with key %q", store.ErrNotFound, key)
	}
	if err != nil {
		return store.Hold{}, fmt.Errorf("store/redis: find hold %q: %w", key, err)
	}
	if len(cur) <= 20 {
		return store.Hold{}, fmt.Errorf("store/redis: hold index for %q is corrupt", key)
	}
	return s.GetHold(ctx, cur[20:])
}

// ListHolds implements store.Holds, in creation order.
func (s *Store) ListHolds(ctx context.Context, status string) ([]store.Hold, error) {
	if err := store.CheckHoldStatus(status); err != nil {
		return nil, err
	}
	var lr *goredis.StringSliceCmd
	if err := s.epochAnd(ctx, func(p goredis.Pipeliner) { lr = p.LRange(ctx, s.key("holdorder"), 0, -1) }); err != nil {
		return nil, fmt.Errorf("store/redis: list holds: %w", err)
	}
	ids, err := lr.Result()
	if err != nil {
		return nil, fmt.Errorf("store/redis: list holds: %w", err)
	}
	out := []store.Hold{}
	const batch = 500
	for len(ids) > 0 {
		n := min(batch, len(ids))
		keys := make([]string, n)
		for i, id := range ids[:n] {
			keys[i] = s.holdKey(id)
		}
		vals, err := s.rdb.MGet(ctx, keys...).Result()
		if err != nil {
			return nil, fmt.Errorf("store/redis: list holds: %w", err)
		}
		for i, v := range vals {
			str, ok := v.(string)
			if !ok {
				continue // deleted by hand
			}
			var h store.Hold
			if err := json.Unmarshal([]byte(str), &h); err != nil {
				return nil, fmt.Errorf("store/redis: hold %q is corrupt: %w", ids[i], err)
			}
			if status == "" || h.Status == status {
				out = append(out, h)
			}
		}
		ids = ids[n:]
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

// updateHold reads the hold, applies the transition and writes it back only if nobody changed it meanwhile
// (compare-and-set on the whole JSON); a lost race re-reads and re-decides.
func (s *Store) updateHold(ctx context.Context, id string, apply func(store.Hold) (store.Hold, bool, error)) (store.Hold, error) {
	for range maxCASAttempts {
		h, raw, err := s.getHold(ctx, id)
		if err != nil {
			return store.Hold{}, err
		}
		next, changed, refused := apply(h)
		if !changed {
			return store.Hold{}, refused
		}
		next = utcHold(next)
		v, err := json.Marshal(next)
		if err != nil {
			return store.Hold{}, err
		}
		n, err := s.run(ctx, casScript, []string{s.holdKey(id)}, raw, v).Int()
		if err != nil {
			return store.Hold{}, fmt.Errorf("store/redis: update hold %s: %w", id, s.lost(err))
		}
		if n == 1 {
			if refused != nil {
				return store.Hold{}, refused
			}
			return next, nil
		}
	}
	return store.Hold{}, fmt.Errorf("store/redis: hold %s kept changing under %d attempts to update it", id, maxCASAttempts)
}
