package redis

import (
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"strconv"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/payguard/payguard/store"
)

// Tickets (issue 36: an unpaid 402 costs at most 512 bytes of Redis memory, ledger included). Per ticket
// key, two keys:
//
//   - tq:<key>, a list in put order of sortable(ExpiresAt) followed by the ticket in store.AppendTicket's
//     compact form (20 digits, then the form's first byte). A list is kept as listpacks whatever its length,
//     a few bytes per entry, where a hash of more than 128 fields or of values over 64 bytes is a hash table
//     of about 100 bytes per field before the data.
//   - topt:<key>, the option the key's tickets share (a ticket whose option differs is stored inline).
//
// And the ticket ids, which are unique across keys while their ticket may be stored: tids:<bucket>, 1,024
// hashes (crc32 of the id), field id → the unix ms until which it is held. A bucket stays a listpack up to
// 128 ids (131,072 ids across the buckets, an hour's worth of tickets at 36 a second), a few bytes of
// overhead per id where a key of its own with an expiry costs about 130; its expired ids are swept (below).
// Redis expires no single field (before 7.4), so expiry is the held-until value, compared in
// the scripts. A bucket's field '' records its own expiry (the unix ms it was last set to), so that a put
// reads it with the id instead of a PTTL, and the expiry is extended, and the expired ids swept, when a put's
// held-until comes within tidExpirySlack/2 of it: once per 5 minutes of held-until per bucket, where before
// 2026-11-27 17:00 a bucket counted its ids (HLEN) on every put and swept them past 64, every 16th put.
//
// Each ticket once cost a tid:<id> key with an expiry, an entry in tlist:<key> and a field in the hash
// tdata:<key> (the layout before 2026-11-27, 700–725 bytes per unpaid 402 with the ledger's lease): that layout
// is still read, so that tickets written by an older replica during a rolling upgrade are taken and their ids
// are not given out again; nothing writes it any more, and its keys expire an hour after their last put.
// An older replica does not see tickets the new layout holds: a paid retry that reaches one finds no
// ticket and no payment is released (fail closed), never twice.

// tidBuckets is how many tids:<bucket> hashes hold the ticket ids.
const tidBuckets = 1024

// reserveTicketScript is reserveScript and the ticket's keys in one script (one round trip per allowed 402):
// KEYS the ledger's two, then tq:<key>, topt:<key>, tids:<bucket>, and the older layout's tid:<id>; ARGV
// reserveScript's seven (ARGV[6] is now in unix ms), then the list entry (sortable expiry and the shared
// form, store.TicketShared), the ticket id, its option, the keys' ttl ms, the unix ms the id is held until,
// and sortable(now - store.TicketReleaseGrace). A ticket id held already is {2}, before anything is
// written. The first ticket of a key sets the shared option; a ticket whose option differs is stored inline
// (first byte store.TicketInline, option appended). Every tqPruneEvery puts, up to twice as many entries at
// the list's head whose reservation has been released (expired more than TicketReleaseGrace ago) leave it,
// so a busy key that is never paid does not keep what can no longer be taken.
var reserveTicketScript = guarded(sweepLua + reserveLua + reserveTicketLua + `
return reserve_ticket()
`)

// reserveTicketLua defines reserve_ticket(), reserveTicketScript's body (KEYS and ARGV as it says).
var reserveTicketLua = `
local function reserve_ticket()
local now = tonumber(ARGV[6])
if redis.call('EXISTS', KEYS[6]) == 1 then return {2} end
-- The bucket's field '' (no id is empty) is the unix ms (the replica's clock) its expiry was last set to,
-- tidExpirySlack beyond the held-until of the id that set it: read with the id, so a put needs no PTTL of
-- the bucket (redis402b); the expiry is extended (relative: PEXPIRE) when the id's held-until comes within
-- half the slack of it, which leaves room for replicas' clocks to differ by that much.
local held = redis.call('HMGET', KEYS[5], ARGV[9], '')
if held[1] and tonumber(held[1]) >= now then return {2} end
local res = reserve()
if res[1] ~= 1 then return res end
if (not held[2]) or tonumber(held[2]) < tonumber(ARGV[12]) + ` + strconv.Itoa(tidExpirySlack/2) + ` then
  redis.call('HSET', KEYS[5], ARGV[9], ARGV[12], '', tonumber(ARGV[12]) + ` + strconv.Itoa(tidExpirySlack) + `)
  redis.call('PEXPIRE', KEYS[5], tonumber(ARGV[11]) + ` + strconv.Itoa(tidExpirySlack) + `)
  -- and its expired ids leave it, at the same moments (redis402b: no HLEN on every put)
  local all = redis.call('HGETALL', KEYS[5])
  for i = 1, #all, 2 do
    if tonumber(all[i + 1]) < now then redis.call('HDEL', KEYS[5], all[i]) end
  end
else
  redis.call('HSET', KEYS[5], ARGV[9], ARGV[12])
end
local ttl = tonumber(ARGV[11])
local opt = redis.call('GET', KEYS[4])
if not opt then
  -- made with its expiry: from here on it is extended together with tq:<key>, never on its own
  redis.call('SET', KEYS[4], ARGV[10], 'PX', ttl + ` + strconv.Itoa(ttlSlackMillis) + `)
  opt = ARGV[10]
end
local len
if opt == ARGV[10] then
  len = redis.call('RPUSH', KEYS[3], ARGV[8])
else
  len = redis.call('RPUSH', KEYS[3], string.sub(ARGV[8], 1, 20) .. '\1' .. string.sub(ARGV[8], 22) .. ARGV[10])
end
if len % ` + strconv.Itoa(tqPruneEvery) + ` == 0 then
  for i = 1, ` + strconv.Itoa(2*tqPruneEvery) + ` do
    local e = redis.call('LINDEX', KEYS[3], 0)
    if (not e) or string.sub(e, 1, 20) >= ARGV[13] then break end
    redis.call('LPOP', KEYS[3])
  end
end
-- tq:<key> and topt:<key> are given the same expiry whenever either is extended, and topt:<key> is made with
-- one, so the list's expiry stands for both: one PTTL for the two (issue 36, redis402b).
if redis.call('PTTL', KEYS[3]) < ttl then
  redis.call('PEXPIRE', KEYS[3], ttl + ` + strconv.Itoa(ttlSlackMillis) + `)
  redis.call('PEXPIRE', KEYS[4], ttl + ` + strconv.Itoa(ttlSlackMillis) + `)
end
return {1}
end
`

// tidExpirySlack (ms): a tids: bucket's expiry is set this far beyond the held-until of the id that sets it,
// and set again when an id's held-until comes within half of it (so once per 5 minutes per bucket, not a
// PTTL on every put).
const tidExpirySlack = 600_000

// tqPruneEvery: a ticket list whose length after a put is a multiple of it drops up to twice as many released
// entries from its head (the rate of two per put, in one pass every so often: a list's head is read once per
// tqPruneEvery puts, not on each, issue 36's Redis CPU per decision).
const tqPruneEvery = 16

// ttlSlackMillis: a ticket's keys are given their ttl and this much more, so that the puts of the next minute
// find their expiry far enough and leave it (one PTTL each instead of a PTTL and a PEXPIRE). A key never
// expires before the ttl of the newest ticket it holds.
const ttlSlackMillis = 60_000

// takeTicketScript: KEYS tq:<key>, topt:<key>, and the older layout's tlist:<key>, tdata:<key>; ARGV
// sortable(now). Takes the newest entry that has not expired, removes it and returns {the ticket, the key's
// shared option}, or false. The list is read from its tail 32 entries at a time (the newest is almost always
// the last). The shared option goes with the key's last ticket. Only when the new layout has none is the
// older one looked at, as it was read before.
var takeTicketScript = guarded(`
local n = redis.call('LLEN', KEYS[1])
local off = 0
while off < n do
  local chunk = redis.call('LRANGE', KEYS[1], -(off + 32), -(off + 1))
  for i = #chunk, 1, -1 do
    local e = chunk[i]
    if string.sub(e, 1, 20) >= ARGV[1] then
      redis.call('LREM', KEYS[1], -1, e)
      local opt = redis.call('GET', KEYS[2])
      if redis.call('LLEN', KEYS[1]) == 0 then redis.call('DEL', KEYS[2]) end
      return {string.sub(e, 21), opt}
    end
  end
  off = off + 32
end
local entries = redis.call('LRANGE', KEYS[3], 0, -1)
for i = #entries, 1, -1 do
  local e = entries[i]
  if string.sub(e, 1, 20) >= ARGV[1] then
    local id = string.sub(e, 22)
    local data = redis.call('HGET', KEYS[4], id)
    redis.call('LREM', KEYS[3], -1, e)
    redis.call('HDEL', KEYS[4], id)
    if data then
      local opt = redis.call('HGET', KEYS[4], '\0opt')
      if redis.call('LLEN', KEYS[3]) == 0 then redis.call('DEL', KEYS[4]) end
      return {data, opt}
    end
  end
end
return false
`)

// tidBucket is the tids: hash that holds id.
func (s *Store) tidBucket(id string) string {
	return s.tids[crc32.ChecksumIEEE([]byte(id))%tidBuckets]
}

// ReserveTicket implements store.Tickets: the leased reservation and the ticket in one script.
func (s *Store) ReserveTicket(ctx context.Context, budget, day string, amountMicros, capMicros int64, t store.Ticket) (store.Ticket, error) {
	t, keys, args, err := s.ticketArgs(budget, day, amountMicros, capMicros, t)
	if err != nil {
		return store.Ticket{}, err
	}
	res, err := s.runOwned(ctx, reserveTicketScript, keys, args).Slice()
	err = s.reserveReply(res, err, budget, day, amountMicros, capMicros)
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
	keys := []string{s.key("tq:", key), s.key("topt:", key), s.key("tlist:", key), s.key("tdata:", key)}
	got, err := s.run(ctx, takeTicketScript, keys, sortable(now)).Slice()
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
