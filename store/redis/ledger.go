package redis

import (
	"context"
	"fmt"
	"strconv"

	goredis "github.com/redis/go-redis/v9"

	"github.com/payguard/payguard/store"
)

// A budget's day is one hash: total (= spent + reserved), spent, reserved, r:<id> per open reservation and
// c:<id> per committed one, each holding the amount.

// reserveScript: KEYS[1] ledger hash; ARGV amount, -amount, cap, id, ttl ms. Returns {1} or
// {0, spent, reserved}. HINCRBY is exact and fails on int64 overflow, which can only mean "over the cap";
// the sum is compared with the cap as canonical decimal strings, never as Lua numbers.
var reserveScript = goredis.NewScript(`
local function gt(a, b)
  if #a ~= #b then return #a > #b end
  return a > b
end
local function refused()
  return {0, redis.call('HGET', KEYS[1], 'spent') or '0', redis.call('HGET', KEYS[1], 'reserved') or '0'}
end
local r = redis.pcall('HINCRBY', KEYS[1], 'total', ARGV[1])
if type(r) == 'table' and r.err then return refused() end
-- a negative total can only be a wrapped sum (a server that does not refuse the overflow): over the cap
if r < 0 or gt(redis.call('HGET', KEYS[1], 'total'), ARGV[3]) then
  redis.call('HINCRBY', KEYS[1], 'total', ARGV[2])
  -- a day's first reservation refused created the hash: it expires like any ledger day
  if redis.call('PTTL', KEYS[1]) < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[5]) end
  return refused()
end
redis.call('HINCRBY', KEYS[1], 'reserved', ARGV[1])
redis.call('HSET', KEYS[1], 'r:' .. ARGV[4], ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return {1}
`)

// commitScript: KEYS[1] ledger hash; ARGV id. Returns 1 (committed now or before) or 0 (unknown).
var commitScript = goredis.NewScript(`
if redis.call('HEXISTS', KEYS[1], 'c:' .. ARGV[1]) == 1 then return 1 end
local amount = redis.call('HGET', KEYS[1], 'r:' .. ARGV[1])
if not amount then return 0 end
if amount ~= '0' then
  redis.call('HINCRBY', KEYS[1], 'reserved', '-' .. amount)
  redis.call('HINCRBY', KEYS[1], 'spent', amount)
end
redis.call('HDEL', KEYS[1], 'r:' .. ARGV[1])
redis.call('HSET', KEYS[1], 'c:' .. ARGV[1], amount)
return 1
`)

func (s *Store) ledgerKey(budget, day string) string { return s.key("ledger:", day, ":", budget) }

// Reserve implements store.Ledger in one script.
func (s *Store) Reserve(ctx context.Context, budget, day string, amountMicros, capMicros int64) (string, error) {
	if err := store.CheckReserve(budget, day, amountMicros, capMicros); err != nil {
		return "", err
	}
	id := store.NewID()
	res, err := reserveScript.Run(ctx, s.rdb, []string{s.ledgerKey(budget, day)},
		strconv.FormatInt(amountMicros, 10), strconv.FormatInt(-amountMicros, 10),
		strconv.FormatInt(capMicros, 10), id, millis(LedgerRetention)).Slice()
	if err != nil {
		return "", fmt.Errorf("store/redis: reserve in budget %s on %s: %w", budget, day, err)
	}
	if len(res) == 3 {
		return "", fmt.Errorf("%w: budget %s on %s: spent %v + reserved %v + %d > cap %d",
			store.ErrBudgetExceeded, budget, day, res[1], res[2], amountMicros, capMicros)
	}
	if len(res) != 1 || res[0] != int64(1) {
		return "", fmt.Errorf("store/redis: reserve script returned %v", res)
	}
	return id, nil
}

// Commit implements store.Ledger in one script.
func (s *Store) Commit(ctx context.Context, budget, day, reservationID string) error {
	// A malformed day could name another budget's key ("ledger:<day>:<budget>").
	if err := store.CheckCommit(budget, day, reservationID); err != nil {
		return err
	}
	n, err := commitScript.Run(ctx, s.rdb, []string{s.ledgerKey(budget, day)}, reservationID).Int()
	if err != nil {
		return fmt.Errorf("store/redis: commit %s in budget %s on %s: %w", reservationID, budget, day, err)
	}
	if n != 1 {
		return store.NoReservation(budget, day, reservationID)
	}
	return nil
}

// State implements store.Ledger; an unknown budget or day is all zeros.
func (s *Store) State(ctx context.Context, budget, day string) (store.BudgetState, error) {
	if err := store.CheckDay(day); err != nil {
		return store.BudgetState{}, err
	}
	vals, err := s.rdb.HMGet(ctx, s.ledgerKey(budget, day), "spent", "reserved").Result()
	if err != nil {
		return store.BudgetState{}, fmt.Errorf("store/redis: state of budget %s on %s: %w", budget, day, err)
	}
	st := store.BudgetState{Day: day}
	for i, dst := range []*int64{&st.Spent, &st.Reserved} {
		if vals[i] == nil {
			continue
		}
		str, _ := vals[i].(string)
		if *dst, err = strconv.ParseInt(str, 10, 64); err != nil {
			return store.BudgetState{}, fmt.Errorf("store/redis: budget %s on %s holds a bad figure %q", budget, day, vals[i])
		}
	}
	return st, nil
}
