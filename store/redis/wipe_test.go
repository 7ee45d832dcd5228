package redis_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/payguard/payguard/internal/testredis"
	"github.com/payguard/payguard/store"
	"github.com/payguard/payguard/store/redis"
)

// The attack: with a $0.50 cap, 50 payments of $0.01 go through, Redis restarts empty, and the next
// payment must be refused (it went through on the old store: the day started again from zero).
func TestWipedRedisRefusesNextPayment(t *testing.T) {
	for _, wipe := range []string{"restart", "flushall"} {
		t.Run(wipe, func(t *testing.T) {
			r := testredis.StartOwn(t)
			ctx := context.Background()
			s, err := redis.Open(ctx, redis.Options{URL: r.URL(), AllowVolatile: true, InitIfEmpty: true})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			const day, cent, capMicros = "2026-11-25", 10_000, 500_000
			for i := range 50 {
				tk, err := s.ReserveTicket(ctx, "b", day, cent, capMicros, store.Ticket{Key: fmt.Sprint("k", i), ExpiresAt: time.Now().Add(time.Minute)})
				if err != nil {
					t.Fatalf("payment %d: %v", i, err)
				}
				if err := s.Commit(ctx, "b", day, tk.ReservationID); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.CreateHold(ctx, store.Hold{ID: "h0", Key: "k0", ExpiresAt: time.Now().Add(time.Hour)}); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Reserve(ctx, "b", day, cent, capMicros); !errors.Is(err, store.ErrBudgetExceeded) {
				t.Fatalf("51st payment before the wipe: %v", err)
			}
			if wipe == "restart" {
				r.Restart()
			} else if err := goredis.NewClient(&goredis.Options{Addr: r.Addr()}).FlushAll(ctx).Err(); err != nil {
				t.Fatal(err)
			}
			_, err = s.Reserve(ctx, "b", day, cent, capMicros)
			if !errors.Is(err, store.ErrLedgerLost) || !strings.Contains(err.Error(), "payguard store reinit --confirm") {
				t.Fatalf("payment after the %s: %v, want ErrLedgerLost naming the recovery command", wipe, err)
			}
			// Every other operation that guards money refuses too, and changes nothing.
			_, err = s.ReserveTicket(ctx, "b", day, cent, capMicros, store.Ticket{Key: "k-after", ExpiresAt: time.Now().Add(time.Minute)})
			checkLost(t, "ReserveTicket", err)
			checkLost(t, "MarkPaymentSeen", s.MarkPaymentSeen(ctx, "digest-1", time.Minute))
			_, err = s.TakeTicket(ctx, "k1", time.Now())
			checkLost(t, "TakeTicket", err)
			_, err = s.State(ctx, "b", day)
			checkLost(t, "State", err)
			_, _, err = s.TakeTrial(ctx, "client", day, 5, time.Hour)
			checkLost(t, "TakeTrial", err)
			checkLost(t, "CreateHold", s.CreateHold(ctx, store.Hold{ID: "h1", Key: "k", ExpiresAt: time.Now().Add(time.Hour)}))
			checkLost(t, "MarkSeller", s.MarkSeller(ctx, "seller.example"))
			_, err = s.IsSeller(ctx, "seller.example") // "not a seller" from a wiped store would allow an upgrade
			checkLost(t, "IsSeller", err)
			// Reads of holds say the ledger is lost, not "not found" or an empty approval queue.
			_, err = s.GetHold(ctx, "h0")
			checkLost(t, "GetHold", err)
			_, err = s.FindHold(ctx, "k0")
			checkLost(t, "FindHold", err)
			_, err = s.ListHolds(ctx, "")
			checkLost(t, "ListHolds", err)
			checkLost(t, "Healthy", s.Healthy(ctx))
			if n, _ := s.Client().DBSize(ctx).Result(); n != 0 {
				t.Fatalf("a refused operation wrote %d keys into the wiped Redis", n)
			}

			// A replica (re)starting on the wiped Redis does not start a fresh ledger either.
			if _, err := redis.Open(ctx, redis.Options{URL: r.URL(), AllowVolatile: true}); !errors.Is(err, redis.ErrNoEpoch) {
				t.Fatalf("Open on the wiped Redis: %v, want ErrNoEpoch", err)
			}
			// The operator's reinit lets new processes start; the one that saw the old epoch still refuses
			// until it is restarted.
			if _, wrote, err := redis.InitEpoch(ctx, redis.Options{URL: r.URL()}, true); err != nil || !wrote {
				t.Fatalf("reinit: wrote %v, %v", wrote, err)
			}
			_, err = s.Reserve(ctx, "b", day, cent, capMicros)
			checkLost(t, "Reserve after reinit, same process", err)
			s2, err := redis.Open(ctx, redis.Options{URL: r.URL(), AllowVolatile: true})
			if err != nil {
				t.Fatal(err)
			}
			defer s2.Close()
			if _, err := s2.Reserve(ctx, "b", day, cent, capMicros); err != nil {
				t.Fatalf("a new process after reinit: %v", err)
			}
		})
	}
}

func checkLost(t *testing.T, what string, err error) {
	t.Helper()
	if !errors.Is(err, store.ErrLedgerLost) {
		t.Errorf("%s on a wiped ledger: %v, want ErrLedgerLost", what, err)
	}
}

// Open refuses a Redis that keeps nothing across a restart, or may evict ledger keys, unless the config
// accepts it; a Redis with an append-only file opens; a refused CONFIG is reported as unknown.
func TestOpenChecksPersistence(t *testing.T) {
	ctx := context.Background()
	volatile := testredis.StartOwn(t)
	if _, err := redis.Open(ctx, redis.Options{URL: volatile.URL(), InitIfEmpty: true}); err == nil ||
		!strings.Contains(err.Error(), "keeps nothing across a restart") || !strings.Contains(err.Error(), "allow_volatile") {
		t.Fatalf("volatile Redis: %v", err)
	}
	evicting := testredis.StartOwn(t, "--appendonly", "yes", "--maxmemory-policy", "volatile-lru")
	if _, err := redis.Open(ctx, redis.Options{URL: evicting.URL(), InitIfEmpty: true}); err == nil || !strings.Contains(err.Error(), "evict") {
		t.Fatalf("evicting Redis: %v", err)
	}
	aof := testredis.StartOwn(t, "--appendonly", "yes")
	s, err := redis.Open(ctx, redis.Options{URL: aof.URL(), InitIfEmpty: true})
	if err != nil {
		t.Fatalf("Redis with appendonly yes: %v", err)
	}
	if p := s.Persistence(); !p.Known || p.AppendOnly != "yes" || len(s.Warnings()) != 0 {
		t.Errorf("appendonly Redis: %+v, warnings %q", p, s.Warnings())
	}
	s.Close()
	noConfig := testredis.StartOwn(t, "--rename-command", "CONFIG", "")
	s, err = redis.Open(ctx, redis.Options{URL: noConfig.URL(), InitIfEmpty: true})
	if err != nil {
		t.Fatalf("Redis refusing CONFIG: %v", err)
	}
	defer s.Close()
	if w := s.Warnings(); s.Persistence().Known || len(w) != 1 || !strings.Contains(w[0], "persistence unknown") {
		t.Errorf("Redis refusing CONFIG: %+v, warnings %q", s.Persistence(), w)
	}
}
