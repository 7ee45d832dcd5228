package redis

import (
	"context"
	"fmt"
	"strconv"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/payguard/payguard/store"
)

// A budget's day is one hash: total (= spent + reserved), spent, reserved, r:<id> per open reservation and
// c:<id> per committed one, each holding the amount. Its leases (store.Tickets: the reservations of tickets
// not yet taken) are a sorted set beside it, lease:<day>:<budget>, id → the time (unix ms) after which the
// reservation is released. Every script that reads the figures first releases the leases due (sweepLua), and
// claimScript pins one; both touch the two keys in one script, so a lease is released or pinned, never both.

// sweepLua releases the leases of KEYS[2] due before ARGV[sweepArg] (unix ms) from the ledger hash KEYS[1],
// once per script run (a script that reads the figures before reserving sweeps once).
const sweepLua = `
local swept = false
local function sweep(now)
  if swept then return end
  swept = true
  local due = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', '(' .. now)
  for _, id in ipairs(due) do
    local amount = redis.call('HGET', KEYS[1], 'r:' .. id)
    if amount then
      if amount ~= '0' then
        redis.call('HINCRBY', KEYS[1], 'reserved', '-' .. amount)
        redis.call('HINCRBY', KEYS[1], 'total', '-' .. amount)
      end
      redis.call('HDEL', KEYS[1], 'r:' .. id)
    end
    redis.call('ZREM', KEYS[2], id)
  end
end
`

// ledgerSlackMillis: a ledger day's expiry is set this much beyond LedgerRetention, so that the reservations
// of the next hour find it far enough and leave it (reserveLua's x).
const ledgerSlackMillis = 3_600_000

// reserveScript: KEYS[1] ledger hash, KEYS[2] its leases; ARGV amount, -amount, cap, id, ttl ms, now ms,
// lease-until ms (empty: not a lease). Returns {1} or {0, spent, reserved}. HINCRBY is exact and fails on
// int64 overflow, which can only mean "over the cap"; the sum is compared with the cap as canonical decimal
// strings, never as Lua numbers.
var reserveLua = `
local function gt(a, b)
  if #a ~= #b then return #a > #b end
  return a > b
end
local function refused()
  local f = redis.call('HMGET', KEYS[1], 'spent', 'reserved')
  return {0, f[1] or '0', f[2] or '0'}
end
local ledger_x -- the ledger's x when the caller read it (false: absent), nil when it did not
local function reserve()
sweep(ARGV[6])
local r = redis.pcall('HINCRBY', KEYS[1], 'total', ARGV[1])
if type(r) == 'table' and r.err then return refused() end
local over
if r >= 0 and r < 1e15 then
  -- r is exact as a Lua number (below 2^53), and so is a cap of at most 15 digits; a cap of 16 or more is
  -- above it. No read of the total back (issue 36: one call less per decision).
  over = #ARGV[3] <= 15 and r > tonumber(ARGV[3])
else
  -- a negative total can only be a wrapped sum (a server that does not refuse the overflow): over the cap
  over = r < 0 or gt(redis.call('HGET', KEYS[1], 'total'), ARGV[3])
end
if over then
  redis.call('HINCRBY', KEYS[1], 'total', ARGV[2])
  -- a day's first reservation refused created the hash: it expires like any ledger day
  if redis.call('PTTL', KEYS[1]) < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[5]) end
  return refused()
end
redis.call('HINCRBY', KEYS[1], 'reserved', ARGV[1])
-- The hash's field x is the unix ms (the replica's clock) its expiry was last set to; the expiry itself is
-- relative (PEXPIRE), so a replica's clock far off never sets it in the past. Set on a day's first reservation (or a hash
-- made again) and then once per ledgerSlackMillis, not on every reservation (redis402b: one call less per
-- decision where the caller read x already, ledger_x): the day expires at least LedgerRetention and at most
-- LedgerRetention + ledgerSlackMillis after its last reservation. An x beyond keep + ledgerSlackMillis was
-- written by a replica whose clock runs ahead of this one's: trusting it would leave the expiry it set (on
-- Redis's clock) to run out up to the skew sooner, so it is set again (attack2: a replica behind sets it on
-- each reservation, as before redis402b, until its clock passes the time x was set at).
if ledger_x == nil then ledger_x = redis.call('HGET', KEYS[1], 'x') end
local keep = tonumber(ARGV[6]) + tonumber(ARGV[5])
if (not ledger_x) or tonumber(ledger_x) < keep or tonumber(ledger_x) > keep + ` + strconv.Itoa(ledgerSlackMillis) + ` then
  redis.call('HSET', KEYS[1], 'r:' .. ARGV[4], ARGV[1], 'x', keep + ` + strconv.Itoa(ledgerSlackMillis) + `)
  redis.call('PEXPIRE', KEYS[1], ARGV[5] + ` + strconv.Itoa(ledgerSlackMillis) + `)
else
  redis.call('HSET', KEYS[1], 'r:' .. ARGV[4], ARGV[1])
end
if ARGV[7] ~= '' then
  redis.call('ZADD', KEYS[2], ARGV[7], ARGV[4])
  redis.call('PEXPIRE', KEYS[2], ARGV[5])
end
return {1}
end
`

var reserveScript = guarded(sweepLua + reserveLua + `
return reserve()
`)

// stateScript: KEYS[1] ledger hash, KEYS[2] its leases; ARGV now ms. Returns {spent, reserved}.
var stateScript = guarded(sweepLua + `
sweep(ARGV[1])
local f = redis.call('HMGET', KEYS[1], 'spent', 'reserved')
return {f[1] or '0', f[2] or '0'}
`)

// claimScript: KEYS[1] ledger hash, KEYS[2] its leases; ARGV id. Pins a lease (the ticket was taken) and
// returns 1, or 0 when the reservation was released (or never existed). A reservation without a lease (a
// plain Reserve, or a ticket stored before leases) is pinned already.
var claimScript = guarded(`
if redis.call('ZREM', KEYS[2], ARGV[1]) == 1 then return 1 end
if redis.call('HEXISTS', KEYS[1], 'r:' .. ARGV[1]) == 1 then return 1 end
if redis.call('HEXISTS', KEYS[1], 'c:' .. ARGV[1]) == 1 then return 1 end
return 0
`)

// commitScript: KEYS[1] ledger hash; ARGV id. Returns 1 (committed now or before) or 0 (unknown).
var commitScript = guarded(`
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

// settleScript: KEYS[1] ledger hash; ARGV id, settled micros (canonical decimal). Like commitScript, but
// only the settled amount becomes spent: the whole reservation leaves reserved, and the rest leaves total.
// Amounts are compared as canonical decimal strings and moved with HINCRBY, never as Lua numbers. Returns 1 (settled now, or committed
// before), 0 (unknown) or {2, reserved} (settled above the reservation: nothing changes).
var settleScript = guarded(`
local function gt(a, b)
  if #a ~= #b then return #a > #b end
  return a > b
end
if redis.call('HEXISTS', KEYS[1], 'c:' .. ARGV[1]) == 1 then return 1 end
local amount = redis.call('HGET', KEYS[1], 'r:' .. ARGV[1])
if not amount then return 0 end
if gt(ARGV[2], amount) then return {2, amount} end
if amount ~= '0' then
  redis.call('HINCRBY', KEYS[1], 'reserved', '-' .. amount)
  redis.call('HINCRBY', KEYS[1], 'total', '-' .. amount)
end
if ARGV[2] ~= '0' then
  redis.call('HINCRBY', KEYS[1], 'spent', ARGV[2])
  redis.call('HINCRBY', KEYS[1], 'total', ARGV[2])
end
redis.call('HDEL', KEYS[1], 'r:' .. ARGV[1])
redis.call('HSET', KEYS[1], 'c:' .. ARGV[1], ARGV[2])
return 1
`)

func (s *Store) ledgerKey(budget, day string) string { return s.key("ledger:", day, ":", budget) }

// ledgerKeys are a budget day's hash and its leases.
func (s *Store) ledgerKeys(budget, day string) []string {
	return []string{s.ledgerKey(budget, day), s.key("lease:", day, ":", budget)}
}

// unixMillis is t in whole unix milliseconds, rounded up, as a decimal string.
func unixMillis(t time.Time) string { return strconv.FormatInt(unixMillisInt(t), 10) }

// unixMillisInt is t in whole unix milliseconds, rounded up.
func unixMillisInt(t time.Time) int64 {
	return (t.UnixNano() + int64(time.Millisecond) - 1) / int64(time.Millisecond)
}

// Reserve implements store.Ledger in one script.
func (s *Store) Reserve(ctx context.Context, budget, day string, amountMicros, capMicros int64) (string, error) {
	if err := store.CheckReserve(budget, day, amountMicros, capMicros); err != nil {
		return "", err
	}
	return s.reserve(ctx, budget, day, amountMicros, capMicros, time.Time{})
}

// reserve reserves, as a lease released after leaseUntil unless it is zero.
func (s *Store) reserve(ctx context.Context, budget, day string, amountMicros, capMicros int64, leaseUntil time.Time) (string, error) {
	id := store.NewID()
	return id, s.reserveWith(ctx, reserveScript, nil, id, budget, day, amountMicros, capMicros, leaseUntil)
}

// reserveWith runs sc, reserveScript or one that adds to it (reserveTicketScript), with the ledger's keys and
// arguments and then keys and args of its own. Its reply is reserveScript's, or {2}: ErrConflict.
func (s *Store) reserveWith(ctx context.Context, sc *goredis.Script, extra []string, id, budget, day string, amountMicros, capMicros int64, leaseUntil time.Time, args ...any) error {
	lease := ""
	if !leaseUntil.IsZero() {
		lease = unixMillis(leaseUntil)
	}
	all := append([]any{strconv.FormatInt(amountMicros, 10), strconv.FormatInt(-amountMicros, 10),
		strconv.FormatInt(capMicros, 10), id, millis(LedgerRetention), unixMillis(s.now()), lease}, args...)
	res, err := s.run(ctx, sc, append(s.ledgerKeys(budget, day), extra...), all...).Slice()
	return s.reserveReply(res, err, budget, day, amountMicros, capMicros)
}

// reserveReply reads reserveScript's reply (or reserveTicketScript's: {2} is ErrConflict).
func (s *Store) reserveReply(res []any, err error, budget, day string, amountMicros, capMicros int64) error {
	if err != nil {
		return fmt.Errorf("store/redis: reserve in budget %s on %s: %w", budget, day, s.lost(err))
	}
	if len(res) == 3 {
		return fmt.Errorf("%w: budget %s on %s: spent %v + reserved %v + %d > cap %d",
			store.ErrBudgetExceeded, budget, day, res[1], res[2], amountMicros, capMicros)
	}
	if len(res) == 1 && res[0] == int64(2) {
		return store.ErrConflict
	}
	if len(res) != 1 || res[0] != int64(1) {
		return fmt.Errorf("store/redis: reserve script returned %v", res)
	}
	return nil
}

// Commit implements store.Ledger in one script.
func (s *Store) Commit(ctx context.Context, budget, day, reservationID string) error {
	// A malformed day could name another budget's key ("ledger:<day>:<budget>").
	if err := store.CheckCommit(budget, day, reservationID); err != nil {
		return err
	}
	n, err := s.run(ctx, commitScript, []string{s.ledgerKey(budget, day)}, reservationID).Int()
	if err != nil {
		return fmt.Errorf("store/redis: commit %s in budget %s on %s: %w", reservationID, budget, day, s.lost(err))
	}
	if n != 1 {
		return store.NoReservation(budget, day, reservationID)
	}
	return nil
}

// Settle implements store.Ledger in one script.
func (s *Store) Settle(ctx context.Context, budget, day, reservationID string, settledMicros int64) error {
	if err := store.CheckSettle(budget, day, reservationID, settledMicros); err != nil {
		return err
	}
	res, err := s.run(ctx, settleScript, []string{s.ledgerKey(budget, day)}, reservationID,
		strconv.FormatInt(settledMicros, 10)).Result()
	if err != nil {
		return fmt.Errorf("store/redis: settle %s in budget %s on %s: %w", reservationID, budget, day, s.lost(err))
	}
	switch v := res.(type) {
	case int64:
		if v == 1 {
			return nil
		}
		return store.NoReservation(budget, day, reservationID)
	case []any:
		if len(v) == 2 && v[0] == int64(2) {
			reserved, _ := v[1].(string)
			n, _ := strconv.ParseInt(reserved, 10, 64)
			return store.SettledAbove(reservationID, settledMicros, n)
		}
	}
	return fmt.Errorf("store/redis: settle script returned %v", res)
}

// State implements store.Ledger; an unknown budget or day is all zeros.
func (s *Store) State(ctx context.Context, budget, day string) (store.BudgetState, error) {
	if err := store.CheckDay(day); err != nil {
		return store.BudgetState{}, err
	}
	vals, err := s.run(ctx, stateScript, s.ledgerKeys(budget, day), unixMillis(s.now())).Slice()
	if err != nil {
		return store.BudgetState{}, fmt.Errorf("store/redis: state of budget %s on %s: %w", budget, day, s.lost(err))
	}
	return stateOf(budget, day, vals)
}

// stateAlarmScript is stateScript and alarmScript in one (issue 36): KEYS the ledger's two, the alarms hash;
// ARGV now ms, host. Returns {spent, reserved, the alarm's JSON or false}.
var stateAlarmScript = guarded(sweepLua + `
sweep(ARGV[1])
local f = redis.call('HMGET', KEYS[1], 'spent', 'reserved')
return {f[1] or '0', f[2] or '0', redis.call('HGET', KEYS[3], ARGV[2])}
`)

// StateAndAlarm implements store.StateAndAlarm in one script.
func (s *Store) StateAndAlarm(ctx context.Context, budget, day, host string, now time.Time) (store.BudgetState, store.Alarm, error, error) {
	if err := store.CheckDay(day); err != nil {
		return store.BudgetState{}, store.Alarm{}, nil, err
	}
	keys := append(s.ledgerKeys(budget, day), s.alarmKeys()[0])
	vals, err := s.run(ctx, stateAlarmScript, keys, unixMillis(s.now()), host).Slice()
	if err != nil {
		return store.BudgetState{}, store.Alarm{}, nil, fmt.Errorf("store/redis: state of budget %s on %s: %w", budget, day, s.lost(err))
	}
	if len(vals) != 3 {
		return store.BudgetState{}, store.Alarm{}, nil, fmt.Errorf("store/redis: state script returned %v", vals)
	}
	st, err := stateOf(budget, day, vals[:2])
	if err != nil {
		return store.BudgetState{}, store.Alarm{}, nil, err
	}
	v, ok := vals[2].(string)
	if !ok { // false: no alarm stored for host
		return st, store.Alarm{}, store.ErrNotFound, nil
	}
	a, alarmErr := readAlarm(host, v, now)
	return st, a, alarmErr, nil
}

// stateOf reads stateScript's {spent, reserved}.
func stateOf(budget, day string, vals []any) (store.BudgetState, error) {
	if len(vals) != 2 {
		return store.BudgetState{}, fmt.Errorf("store/redis: state script returned %v", vals)
	}
	st := store.BudgetState{Day: day}
	for i, dst := range []*int64{&st.Spent, &st.Reserved} {
		str, _ := vals[i].(string)
		var err error
		if *dst, err = strconv.ParseInt(str, 10, 64); err != nil {
			return store.BudgetState{}, fmt.Errorf("store/redis: budget %s on %s holds a bad figure %q", budget, day, vals[i])
		}
	}
	return st, nil
}

// claim pins the lease of a taken ticket's reservation; false means it was released first.
func (s *Store) claim(ctx context.Context, budget, day, id string) (bool, error) {
	n, err := s.run(ctx, claimScript, s.ledgerKeys(budget, day), id).Int()
	if err != nil {
		return false, fmt.Errorf("store/redis: pin reservation %s in budget %s on %s: %w", id, budget, day, s.lost(err))
	}
	return n == 1, nil
}
