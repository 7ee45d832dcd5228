package redis_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/payguard/payguard/store"
	"github.com/payguard/payguard/store/redis"
)

// A ledger day's expiry is refreshed once an hour by its field x, which a replica writes in its own clock
// while the expiry itself counts on Redis's (redis402b). Attack (attack2): a replica whose clock runs hours
// ahead reserves first and writes an x far in the future; a replica with the right clock then reserves two
// hours later (real time on Redis's side, shown by lowering the key's PTTL as two hours would). Before the
// fix that replica found x "far enough" and left the expiry, so the day lived less than LedgerRetention
// after its last reservation (SPEC: at least LedgerRetention), the skew's worth less.
func TestLedgerExpiryNotShortenedByAReplicaAhead(t *testing.T) {
	ctx := context.Background()
	real0 := time.Date(2026, 11, 27, 6, 0, 0, 0, time.UTC)
	ahead := real0.Add(6 * time.Hour) // replica A's clock
	right := real0                    // replica B's clock
	a, rdb, prefix := clockStore(t, &ahead)
	var mu sync.Mutex
	opts := testOptions(prefix)
	opts.Now = func() time.Time { mu.Lock(); defer mu.Unlock(); return right }
	b, err := redis.Open(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	day := real0.Format("2006-01-02")
	lk := prefix + "ledger:" + day + ":b"
	for i, viaAhead := range []bool{false, true} { // ReserveTicket and ReserveTicketAhead both reserve
		rdb.Del(ctx, lk)
		reserve := func(s *redis.Store, at time.Time, n int) {
			t.Helper()
			tk := store.Ticket{ID: fmt.Sprint("tkt_skew", i, n), Key: "k", ExpiresAt: at.Add(time.Minute)}
			if viaAhead {
				_, err = s.ReserveTicketAhead(ctx, "b", day, "seller.example", 1, 1<<40, tk, at)
			} else {
				_, err = s.ReserveTicket(ctx, "b", day, 1, 1<<40, tk)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		reserve(a, ahead, 1)
		// two hours pass on Redis's clock: the expiry A set has two hours less to run
		ttl, err := rdb.PTTL(ctx, lk).Result()
		if err != nil || ttl <= redis.LedgerRetention {
			t.Fatalf("after A: PTTL %v (%v)", ttl, err)
		}
		if err := rdb.PExpire(ctx, lk, ttl-2*time.Hour).Err(); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		right = real0.Add(2 * time.Hour)
		mu.Unlock()
		reserve(b, right, 2)
		if ttl, err := rdb.PTTL(ctx, lk).Result(); err != nil || ttl < redis.LedgerRetention {
			t.Errorf("viaAhead=%v: after B's reservation the day expires in %v (%v), want at least LedgerRetention (%v)",
				viaAhead, ttl, err, redis.LedgerRetention)
		}
		mu.Lock()
		right = real0
		mu.Unlock()
	}
}

// A ledger day whose expiry an operator removed (PERSIST) is kept, never dropped: the hourly refresh
// (field x) gives it an expiry again at the latest an hour on, and a reservation in between leaves it
// without one rather than shortening anything (attack2).
func TestLedgerExpiryAfterPersist(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 27, 6, 0, 0, 0, time.UTC)
	s, rdb, prefix := clockStore(t, &now)
	day := now.Format("2006-01-02")
	lk := prefix + "ledger:" + day + ":b"
	reserve := func(n int) {
		t.Helper()
		if _, err := s.ReserveTicket(ctx, "b", day, 1, 1<<40, store.Ticket{ID: fmt.Sprint("tkt_p", n), Key: "k", ExpiresAt: now.Add(3 * time.Hour)}); err != nil {
			t.Fatal(err)
		}
	}
	reserve(1)
	if err := rdb.Persist(ctx, lk).Err(); err != nil {
		t.Fatal(err)
	}
	now = now.Add(30 * time.Minute)
	reserve(2)
	if ttl, _ := rdb.PTTL(ctx, lk).Result(); ttl >= 0 {
		t.Fatalf("within the hour: PTTL %v, want none (left as the operator made it)", ttl)
	}
	now = now.Add(31 * time.Minute)
	reserve(3)
	if ttl, _ := rdb.PTTL(ctx, lk).Result(); ttl < redis.LedgerRetention {
		t.Fatalf("an hour on: PTTL %v, want at least %v", ttl, redis.LedgerRetention)
	}
	st, err := s.State(ctx, "b", day)
	if err != nil || st.Reserved != 3 {
		t.Fatalf("the day holds %+v (%v), want its 3 reservations", st, err)
	}
}
