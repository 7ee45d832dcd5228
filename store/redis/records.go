package redis

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/payguard/payguard/store"
)

// seenScript: KEYS seen:<digest>; ARGV ttl ms. SET NX PX under the epoch guard: 1 when new, 0 when seen.
var seenScript = guarded(`
if redis.call('SET', KEYS[1], '1', 'NX', 'PX', ARGV[1]) then return 1 end
return 0
`)

// forgetSeenScript: KEYS seen:<digest>. DEL under the epoch guard.
var forgetSeenScript = guarded(`
redis.call('DEL', KEYS[1])
return 1
`)

// ForgetPaymentSeen implements store.Tickets in one script.
func (s *Store) ForgetPaymentSeen(ctx context.Context, digest string) error {
	if err := store.CheckName("payment digest", digest); err != nil {
		return err
	}
	if err := s.run(ctx, forgetSeenScript, []string{s.key("seen:", digest)}).Err(); err != nil {
		return fmt.Errorf("store/redis: forget payment seen: %w", s.lost(err))
	}
	return nil
}

// MarkPaymentSeen implements store.Tickets with SET NX PX; expiry is Redis's.
func (s *Store) MarkPaymentSeen(ctx context.Context, digest string, ttl time.Duration) error {
	if err := store.CheckName("payment digest", digest); err != nil {
		return err
	}
	if ttl <= 0 {
		return fmt.Errorf("%w: payment digest ttl %v must be positive", store.ErrInvalid, ttl)
	}
	n, err := s.run(ctx, seenScript, []string{s.key("seen:", digest)}, millis(ttl)).Int()
	if err != nil {
		return fmt.Errorf("store/redis: mark payment seen: %w", s.lost(err))
	}
	if n != 1 {
		return fmt.Errorf("%w: payment %s was seen before", store.ErrAlreadyUsed, digest)
	}
	return nil
}

// trialScript: KEYS trial counter; ARGV limit, retention ms. Returns {ok, count}. Counts are small
// integers, exact as Lua numbers.
var trialScript = guarded(`
local c = tonumber(redis.call('GET', KEYS[1]) or '0')
if c >= tonumber(ARGV[1]) then return {0, c} end
c = redis.call('INCR', KEYS[1])
if c == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return {1, c}
`)

// TakeTrial implements store.Trial in one script; the counter expires retention after the day's first call.
func (s *Store) TakeTrial(ctx context.Context, client, day string, limit int, retention time.Duration) (bool, int, error) {
	if err := store.CheckTrial(client, day, retention); err != nil {
		return false, 0, err
	}
	res, err := s.run(ctx, trialScript, []string{s.key("trial:", day, client)}, limit, millis(retention)).Int64Slice()
	if err != nil {
		return false, 0, fmt.Errorf("store/redis: trial for %s on %s: %w", client, day, s.lost(err))
	}
	if len(res) != 2 {
		return false, 0, fmt.Errorf("store/redis: trial script returned %v", res)
	}
	return res[0] == 1, int(res[1]), nil
}

// indexTimeScript: KEYS obs:<url>, obsupdated; ARGV json, sortable(ObservedAt), max per URL (0 = no
// bound), max age in ms (0 = none). The list keeps the newest max entries; it expires max age after its last
// put (readers also drop entries older than that, so trimming by age needs no decoding here).
var indexTimeScript = goredis.NewScript(`
redis.call('RPUSH', KEYS[1], ARGV[1])
local maxn = tonumber(ARGV[3])
if maxn > 0 then redis.call('LTRIM', KEYS[1], -maxn, -1) end
local age = tonumber(ARGV[4])
if age > 0 then redis.call('PEXPIRE', KEYS[1], age) end
local cur = redis.call('GET', KEYS[2])
if (not cur) or ARGV[2] > cur then redis.call('SET', KEYS[2], ARGV[2]) end
return 1
`)

// PutObservation implements store.Endpoints.
func (s *Store) PutObservation(ctx context.Context, o store.Observation, keep store.Retention) error {
	if err := store.CheckObservation(o); err != nil {
		return err
	}
	if err := store.CheckRetention(keep); err != nil {
		return err
	}
	o.ObservedAt = o.ObservedAt.UTC()
	v, err := json.Marshal(o)
	if err != nil {
		return err
	}
	keys := []string{s.key("obs:", o.URL), s.key("obsupdated")}
	ageMS := int64(0)
	if keep.MaxAge > 0 {
		ageMS = millis(keep.MaxAge)
	}
	if err := indexTimeScript.Run(ctx, s.rdb, keys, v, sortable(o.ObservedAt), keep.MaxPerURL, ageMS).Err(); err != nil {
		return fmt.Errorf("store/redis: put observation of %s: %w", o.URL, err)
	}
	return nil
}

// Observations implements store.Endpoints: every method's observations of url, oldest first (put order
// breaks ties).
func (s *Store) Observations(ctx context.Context, url string) ([]store.Observation, error) {
	raws, err := s.rdb.LRange(ctx, s.key("obs:", url), 0, -1).Result()
	if err != nil {
		return nil, fmt.Errorf("store/redis: observations of %s: %w", url, err)
	}
	out := make([]store.Observation, 0, len(raws))
	for _, raw := range raws {
		var o store.Observation
		if err := json.Unmarshal([]byte(raw), &o); err != nil {
			return nil, fmt.Errorf("store/redis: observation of %s is corrupt: %w", url, err)
		}
		out = append(out, o)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].ObservedAt.Before(out[j].ObservedAt) })
	return out, nil
}

// IndexUpdatedAt implements store.Endpoints.
func (s *Store) IndexUpdatedAt(ctx context.Context) (time.Time, error) {
	v, err := s.rdb.Get(ctx, s.key("obsupdated")).Result()
	if errors.Is(err, goredis.Nil) {
		return time.Time{}, nil
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("store/redis: index time: %w", err)
	}
	t, err := fromSortable(v)
	if err != nil {
		return time.Time{}, fmt.Errorf("store/redis: index time %q is corrupt: %w", v, err)
	}
	return t, nil
}
