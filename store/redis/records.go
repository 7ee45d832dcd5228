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

// Tickets: tid:<id> reserves the id; tlist:<key> lists "sortable(ExpiresAt) id" in put order; tdata:<key>
// maps id → the ticket in store.EncodeTicket's compact form, and the field "\x00opt" (a NUL byte keeps it
// apart from every ticket id) → the option the key's tickets share (issue 36: a ticket of the shared option stores none of its own). Tickets written before
// are JSON; store.DecodeTicket reads both.

// reserveTicketScript is reserveScript and the ticket's keys in one script (one round trip per allowed 402,
// issue 36): KEYS the ledger's two, then tid:<id>, tlist:<key>, tdata:<key>; ARGV reserveScript's seven, then
// the list entry, the ticket id, its shared form (store.TicketShared), its option, the ticket keys' ttl ms.
// A ticket id already reserved is {2}, before anything is written. The first ticket of a key sets the shared
// option; a ticket whose option differs is stored inline (first byte store.TicketInline, option appended).
var reserveTicketScript = guarded(sweepLua + reserveLua + `
if redis.call('EXISTS', KEYS[3]) == 1 then return {2} end
local res = reserve()
if res[1] ~= 1 then return res end
redis.call('SET', KEYS[3], '1', 'PX', ARGV[12])
redis.call('RPUSH', KEYS[4], ARGV[8])
local opt = redis.call('HGET', KEYS[5], '\0opt')
if not opt then
  redis.call('HSET', KEYS[5], '\0opt', ARGV[11])
  opt = ARGV[11]
end
if opt == ARGV[11] then
  redis.call('HSET', KEYS[5], ARGV[9], ARGV[10])
else
  redis.call('HSET', KEYS[5], ARGV[9], '\1' .. string.sub(ARGV[10], 2) .. ARGV[11])
end
for i = 4, 5 do
  if redis.call('PTTL', KEYS[i]) < tonumber(ARGV[12]) then redis.call('PEXPIRE', KEYS[i], ARGV[12]) end
end
return {1}
`)

// takeTicketScript: KEYS tlist:<key>, tdata:<key>; ARGV sortable(now). Takes the newest entry that has not
// expired, removes it and returns {its value, the key's shared option}, or false. The shared option goes
// with the key's last ticket.
var takeTicketScript = guarded(`
local entries = redis.call('LRANGE', KEYS[1], 0, -1)
for i = #entries, 1, -1 do
  local e = entries[i]
  if string.sub(e, 1, 20) >= ARGV[1] then
    local id = string.sub(e, 22)
    local data = redis.call('HGET', KEYS[2], id)
    redis.call('LREM', KEYS[1], -1, e)
    redis.call('HDEL', KEYS[2], id)
    if data then
      local opt = redis.call('HGET', KEYS[2], '\0opt')
      if redis.call('LLEN', KEYS[1]) == 0 then redis.call('DEL', KEYS[2]) end
      return {data, opt}
    end
  end
end
return false
`)

// ReserveTicket implements store.Tickets: the leased reservation and the ticket in one script.
func (s *Store) ReserveTicket(ctx context.Context, budget, day string, amountMicros, capMicros int64, t store.Ticket) (store.Ticket, error) {
	t.Budget, t.Day, t.AmountMicros = budget, day, amountMicros
	if err := store.CheckTicket(&t); err != nil {
		return store.Ticket{}, err
	}
	if err := store.CheckReserve(budget, day, amountMicros, capMicros); err != nil {
		return store.Ticket{}, err
	}
	t.ReservationID = store.NewID()
	t.ExpiresAt = t.ExpiresAt.UTC()
	ttl := max(t.ExpiresAt.Sub(s.now()), 0) + ticketGrace
	keys := []string{s.key("tid:", t.ID), s.key("tlist:", t.Key), s.key("tdata:", t.Key)}
	err := s.reserveWith(ctx, reserveTicketScript, keys, t.ReservationID, budget, day, amountMicros, capMicros,
		t.ExpiresAt.Add(store.TicketReleaseGrace),
		sortable(t.ExpiresAt)+" "+t.ID, t.ID, store.EncodeTicket(&t, true), []byte(t.Option), millis(ttl))
	if errors.Is(err, store.ErrConflict) {
		return store.Ticket{}, fmt.Errorf("%w: ticket %s already exists", store.ErrConflict, t.ID)
	}
	if err != nil {
		return store.Ticket{}, err
	}
	return t, nil
}

// TakeTicket implements store.Tickets in one script: newest means stored last.
func (s *Store) TakeTicket(ctx context.Context, key string, now time.Time) (store.Ticket, error) {
	got, err := s.run(ctx, takeTicketScript, []string{s.key("tlist:", key), s.key("tdata:", key)}, sortable(now)).Slice()
	if errors.Is(err, goredis.Nil) {
		return store.Ticket{}, fmt.Errorf("%w: no unused, unexpired ticket with key %q", store.ErrNotFound, key)
	}
	if err != nil {
		return store.Ticket{}, fmt.Errorf("store/redis: take ticket %q: %w", key, s.lost(err))
	}
	raw, _ := got[0].(string)
	shared := func() []byte { // a missing option is nil, and DecodeTicket refuses a shared ticket without one
		if len(got) > 1 {
			if o, ok := got[1].(string); ok {
				return []byte(o)
			}
		}
		return nil
	}
	t, err := store.DecodeTicket(key, []byte(raw), shared)
	if err != nil {
		return store.Ticket{}, fmt.Errorf("store/redis: ticket under key %q is corrupt: %w", key, err)
	}
	// Taken, the ticket is gone; its reservation is pinned next, in the ledger's keys. Should this process
	// die in between, no payment was released and the lease is released in time; should the lease have been
	// released first (a replica whose clock runs ahead), the payment is not released either.
	ok, err := s.claim(ctx, t.Budget, t.Day, t.ReservationID)
	if err != nil {
		return store.Ticket{}, err
	}
	if !ok {
		return store.Ticket{}, fmt.Errorf("%w: ticket %s expired and its reservation was released", store.ErrNotFound, t.ID)
	}
	t.Used = true
	return t, nil
}

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
