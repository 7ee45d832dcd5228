package redis_test

import (
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"sync"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/payguard/payguard/store"
	"github.com/payguard/payguard/store/redis"
)

// clockStore opens a fresh prefix whose store reads the clock *now, and a plain client on the same Redis.
func clockStore(t *testing.T, now *time.Time) (*redis.Store, *goredis.Client, string) {
	t.Helper()
	var mu sync.Mutex
	prefix := fmt.Sprintf("%slayout%d:", runPrefix, storeSeq.Add(1))
	opts := testOptions(prefix)
	opts.Now = func() time.Time { mu.Lock(); defer mu.Unlock(); return *now }
	s, err := redis.Open(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cleanPrefix(t, prefix) })
	ro, _ := goredis.ParseURL(redisURL())
	rdb := goredis.NewClient(ro)
	t.Cleanup(func() { rdb.Close() })
	return s, rdb, prefix
}

// Ticket ids are held in shared hashes, not a key each (issue 36): an id is refused while its ticket may be
// stored, given out again after, and a bucket drops its expired ids as it grows, so it never holds more than
// the ids still held plus a few.
func TestTicketIDsAreHeldThenSwept(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	s, rdb, prefix := clockStore(t, &now)
	// 96 ids in one bucket (the bucket is the store's business: found here by the id's crc32, as it does).
	byBucket := map[uint32][]string{}
	var ids []string
	for i := 0; ids == nil; i++ {
		id := fmt.Sprint("tkt_", i)
		b := crc32.ChecksumIEEE([]byte(id)) % 1024
		if byBucket[b] = append(byBucket[b], id); len(byBucket[b]) == 96 {
			ids = byBucket[b]
		}
	}
	put := func(id string, exp time.Time) error {
		_, err := s.ReserveTicket(ctx, "b", "2026-11-27", 1, 1<<40, store.Ticket{ID: id, Key: "k:" + id, ExpiresAt: exp})
		return err
	}
	for _, id := range ids[:80] {
		if err := put(id, now.Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
	}
	bucket := ""
	keys, _ := rdb.Keys(ctx, prefix+"tids:*").Result()
	for _, k := range keys {
		if n, _ := rdb.HLen(ctx, k).Result(); n == 81 { // the 80 ids and the bucket's expiry ('')
			bucket = k
		}
	}
	if bucket == "" {
		t.Fatalf("no bucket holds the 80 ids: %v", keys)
	}
	if err := put(ids[0], now.Add(time.Minute)); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("an id held was given out again: %v", err)
	}
	// Past the tickets' expiry and the store's hour of grace: the ids are free, and the bucket sweeps them.
	now = now.Add(time.Minute + time.Hour + time.Second)
	if err := put(ids[0], now.Add(time.Minute)); err != nil {
		t.Fatalf("an expired id stayed held: %v", err)
	}
	for _, id := range ids[80:95] {
		if err := put(id, now.Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
	}
	if n, _ := rdb.HLen(ctx, bucket).Result(); n != 17 {
		t.Fatalf("the bucket holds %d fields after its sweep, want the 16 ids still held and its expiry", n)
	}
	if enc, _ := rdb.ObjectEncoding(ctx, bucket).Result(); enc != "listpack" && enc != "ziplist" {
		t.Fatalf("the bucket is a %s", enc)
	}
}

// A busy ticket key whose 402s are never paid does not keep what can no longer be taken: every 16th put
// drops up to 32 entries at the list's head whose reservation was released (expired more than
// TicketReleaseGrace ago), two per put as before in one pass (issue 36: the list's head is read once per 16
// puts); an entry expired within the grace stays (a replica whose clock runs behind may still take it).
func TestReleasedTicketsLeaveTheList(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	start := now
	s, rdb, prefix := clockStore(t, &now)
	put := func(exp time.Time) {
		t.Helper()
		if _, err := s.ReserveTicket(ctx, "b", "2026-11-27", 1, 1<<40, store.Ticket{Key: "busy", ExpiresAt: exp}); err != nil {
			t.Fatal(err)
		}
	}
	for range 13 {
		put(now.Add(time.Minute))
	}
	put(now.Add(10 * time.Minute))
	now = now.Add(time.Minute + store.TicketReleaseGrace + time.Second) // the first 13 are released
	put(now.Add(-30 * time.Second))                                     // expired, within the grace
	llen := func() int64 { n, _ := rdb.LLen(ctx, prefix+"tq:busy").Result(); return n }
	if n := llen(); n != 15 {
		t.Fatalf("%d entries after the 15th put, want 15 (the head is pruned on every 16th)", n)
	}
	put(now.Add(time.Minute))
	if n := llen(); n != 3 {
		t.Fatalf("%d entries, want 3: the one of ten minutes, the one within the grace and the new one", n)
	}
	for _, want := range []time.Time{now.Add(time.Minute), start.Add(10 * time.Minute)} {
		tk, err := s.TakeTicket(ctx, "busy", now)
		if err != nil || !tk.ExpiresAt.Equal(want) {
			t.Fatalf("took %+v, %v; want the ticket expiring at %v", tk, err, want)
		}
	}
	if _, err := s.TakeTicket(ctx, "busy", now); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("an expired ticket was taken: %v", err)
	}
	if n := llen(); n != 1 {
		t.Fatalf("%d entries left, want the one within the grace", n)
	}
}

// A ticket's keys outlive it by the hour's grace whatever puts come after (a later ticket with a shorter
// life never shortens them), and a put finds them far enough to leave them for a minute (issue 36: one PTTL
// per key and put, not a PEXPIRE too).
func TestTicketKeysOutliveTheirTickets(t *testing.T) {
	ctx := context.Background()
	now := time.Now()
	s, rdb, prefix := clockStore(t, &now)
	long := store.Ticket{ID: "tkt_long", Key: "k", ExpiresAt: now.Add(30 * time.Minute)}
	if _, err := s.ReserveTicket(ctx, "b", now.UTC().Format("2006-01-02"), 1, 1<<40, long); err != nil {
		t.Fatal(err)
	}
	short := store.Ticket{ID: "tkt_short", Key: "k", ExpiresAt: now.Add(time.Minute), Option: []byte("other")}
	if _, err := s.ReserveTicket(ctx, "b", now.UTC().Format("2006-01-02"), 1, 1<<40, short); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"tq:k", "topt:k"} {
		ttl, err := rdb.PTTL(ctx, prefix+k).Result()
		if err != nil || ttl < 90*time.Minute-time.Second || ttl > 91*time.Minute+time.Second {
			t.Errorf("%s: PTTL %v (%v); want the long ticket's 30 minutes + an hour, + at most a minute", k, ttl, err)
		}
	}
}

// One PTTL stands for tq:<key> and topt:<key> (redis402b): topt:<key> is made with its expiry, so a key's
// option made again beside a list that still has a long expiry (lost alone, or the list's expiry far enough
// to leave) never lives without one; and a list made again beside an option still there extends both.
func TestTicketOptionKeyAlwaysExpires(t *testing.T) {
	ctx := context.Background()
	now := time.Now()
	s, rdb, prefix := clockStore(t, &now)
	day := now.UTC().Format("2006-01-02")
	put := func(id string, life time.Duration) {
		t.Helper()
		if _, err := s.ReserveTicket(ctx, "b", day, 1, 1<<40, store.Ticket{ID: id, Key: "k", ExpiresAt: now.Add(life)}); err != nil {
			t.Fatal(err)
		}
	}
	put("tkt_1", 30*time.Minute)
	rdb.Del(ctx, prefix+"topt:k") // the option lost alone: the list's expiry is far enough to be left
	put("tkt_2", time.Minute)
	if ttl, err := rdb.PTTL(ctx, prefix+"topt:k").Result(); err != nil || ttl < 61*time.Minute-time.Second || ttl > 62*time.Minute+time.Second {
		t.Fatalf("topt:k made again: PTTL %v (%v); want its ticket's minute + an hour, + at most a minute", ttl, err)
	}
	rdb.Del(ctx, prefix+"tq:k") // the list gone (emptied), its option still there: both are extended
	put("tkt_3", 30*time.Minute)
	for _, k := range []string{"tq:k", "topt:k"} {
		if ttl, err := rdb.PTTL(ctx, prefix+k).Result(); err != nil || ttl < 90*time.Minute-time.Second || ttl > 91*time.Minute+time.Second {
			t.Errorf("%s: PTTL %v (%v); want the new ticket's 30 minutes + an hour, + at most a minute", k, ttl, err)
		}
	}
}

// A ledger day's expiry is set on its first reservation and then once an hour (redis402b), never left to
// fall below LedgerRetention after a reservation: by the hash's field x (the expiry last set, unix ms), on
// both paths that reserve (ReserveTicketAhead reads x with the day's figures, ReserveTicket on its own), and
// again when the hash is made anew.
func TestLedgerExpiryIsExtendedOncePerHour(t *testing.T) {
	ctx := context.Background()
	start := time.Now().Truncate(time.Millisecond)
	now := start
	s, rdb, prefix := clockStore(t, &now)
	day := now.UTC().Format("2006-01-02")
	lk := prefix + "ledger:" + day + ":b"
	n := 0
	reserve := func(ahead bool) {
		t.Helper()
		n++
		tk := store.Ticket{ID: fmt.Sprint("tkt_x", n), Key: "k", ExpiresAt: now.Add(time.Minute)}
		var err error
		if ahead {
			_, err = s.ReserveTicketAhead(ctx, "b", day, "seller.example", 1, 1<<40, tk, now)
		} else {
			_, err = s.ReserveTicket(ctx, "b", day, 1, 1<<40, tk)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	x := func() int64 {
		t.Helper()
		v, err := rdb.HGet(ctx, lk, "x").Int64()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	want := func(at time.Time) int64 { return at.Add(redis.LedgerRetention + time.Hour).UnixMilli() }
	for _, ahead := range []bool{false, true} {
		rdb.Del(ctx, lk) // a day's first reservation, or its hash made again: x and the expiry are set
		now = start
		reserve(ahead)
		if got := x(); got != want(now) {
			t.Fatalf("ahead=%v: first reservation: x %d, want %d", ahead, got, want(now))
		}
		if ttl, err := rdb.PTTL(ctx, lk).Result(); err != nil || ttl <= redis.LedgerRetention {
			t.Fatalf("ahead=%v: PTTL %v (%v)", ahead, ttl, err)
		}
		now = start.Add(59 * time.Minute) // far enough: left
		reserve(ahead)
		if got := x(); got != want(start) {
			t.Fatalf("ahead=%v: within the hour: x %d, want it left at %d", ahead, got, want(start))
		}
		now = start.Add(61 * time.Minute) // an hour on: extended
		reserve(ahead)
		if got := x(); got != want(now) {
			t.Fatalf("ahead=%v: after the hour: x %d, want %d", ahead, got, want(now))
		}
	}
}

// A tids: bucket outlives every id it holds by the hour's grace (redis402b: its expiry is recorded in its
// field ” and extended when a put's held-until comes near it, not read with a PTTL on every put): a later
// id held longer extends it, and a bucket whose record is gone (or never was: one written by an older
// replica) has its expiry set again.
func TestTicketIDBucketOutlivesItsIDs(t *testing.T) {
	ctx := context.Background()
	now := time.Now().Truncate(time.Millisecond)
	s, rdb, prefix := clockStore(t, &now)
	byBucket := map[uint32][]string{}
	var ids []string
	for i := 0; ids == nil; i++ {
		id := fmt.Sprint("tkt_b", i)
		b := crc32.ChecksumIEEE([]byte(id)) % 1024
		if byBucket[b] = append(byBucket[b], id); len(byBucket[b]) == 3 {
			ids = byBucket[b]
		}
	}
	bucket := fmt.Sprintf("%stids:%x", prefix, crc32.ChecksumIEEE([]byte(ids[0]))%1024)
	put := func(id string, life time.Duration) {
		t.Helper()
		tk := store.Ticket{ID: id, Key: "k:" + id, ExpiresAt: now.Add(life)}
		if _, err := s.ReserveTicket(ctx, "b", now.UTC().Format("2006-01-02"), 1, 1<<40, tk); err != nil {
			t.Fatal(err)
		}
	}
	ttlAtLeast := func(want time.Duration) {
		t.Helper()
		ttl, err := rdb.PTTL(ctx, bucket).Result()
		if err != nil || ttl < want {
			t.Fatalf("bucket PTTL %v (%v), want at least %v", ttl, err, want)
		}
	}
	put(ids[0], time.Minute)
	ttlAtLeast(time.Hour + time.Minute)
	put(ids[1], 30*time.Minute) // held well past the bucket's expiry: extended
	ttlAtLeast(time.Hour + 30*time.Minute)
	rdb.HDel(ctx, bucket, "")             // the record gone
	rdb.PExpire(ctx, bucket, time.Minute) // and an expiry too short for what it holds
	put(ids[2], time.Minute)
	ttlAtLeast(time.Hour + time.Minute)
}
