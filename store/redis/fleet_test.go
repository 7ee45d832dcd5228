package redis_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/payguard/payguard/store"
	"github.com/payguard/payguard/store/redis"
)

// Several replicas (separate clients and connection pools, as separate processes would have) reserve
// against one cap: the cap holds across them.
func TestReplicasShareOneCap(t *testing.T) {
	first := openTest(t)
	defer first.Close()
	prefix := first.Prefix()
	replicas := []*redis.Store{first}
	for range 3 {
		r, err := redis.Open(context.Background(), testOptions(prefix))
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		replicas = append(replicas, r)
	}
	ctx := context.Background()
	const amount, capMicros, callers = 30_000, 1_000_000, 128
	var mu sync.Mutex
	won := 0
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			r := replicas[i%len(replicas)]
			id, err := r.Reserve(ctx, "fleet", "2026-11-22", amount, capMicros)
			if errors.Is(err, store.ErrBudgetExceeded) {
				return
			}
			if err != nil {
				t.Error(err)
				return
			}
			// Commit through another replica than the one that reserved.
			if err := replicas[(i+1)%len(replicas)].Commit(ctx, "fleet", "2026-11-22", id); err != nil {
				t.Error(err)
			}
			mu.Lock()
			won++
			mu.Unlock()
		}()
	}
	close(start)
	wg.Wait()
	if won != capMicros/amount {
		t.Fatalf("%d reservations of %d won across replicas, want %d", won, amount, capMicros/amount)
	}
	for _, r := range replicas {
		st, err := r.State(ctx, "fleet", "2026-11-22")
		if err != nil || st.Spent != int64(won*amount) || st.Reserved != 0 {
			t.Fatalf("State = %+v, %v; want spent %d", st, err, won*amount)
		}
	}
}

// Prefixes keep deployments apart: the same budget under another prefix is another ledger.
func TestPrefixIsolation(t *testing.T) {
	a, b := openTest(t), openTest(t)
	defer a.Close()
	defer b.Close()
	ctx := context.Background()
	if _, err := a.Reserve(ctx, "agent", "2026-11-22", 100, 100); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Reserve(ctx, "agent", "2026-11-22", 100, 100); err != nil {
		t.Fatalf("a full budget under one prefix refused a reservation under another: %v", err)
	}
}

// A budget's day is not kept forever: its key carries LedgerRetention.
func TestLedgerExpires(t *testing.T) {
	s := openTest(t)
	defer s.Close()
	ctx := context.Background()
	if _, err := s.Reserve(ctx, "agent", "2026-11-22", 1, 100); err != nil {
		t.Fatal(err)
	}
	ttl, err := s.Client().PTTL(ctx, s.Prefix()+"ledger:2026-11-22:agent").Result()
	if err != nil {
		t.Fatal(err)
	}
	// set once an hour, not on every reservation (redis402b): LedgerRetention and at most an hour more
	if ttl <= redis.LedgerRetention || ttl > redis.LedgerRetention+time.Hour+time.Second {
		t.Fatalf("ledger key ttl %v, want between %v and an hour more", ttl, redis.LedgerRetention)
	}
}

// An unreachable Redis is a clear error at Open, never a store that fails later or silently allows.
func TestOpenUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	_, err = redis.Open(context.Background(), redis.Options{URL: fmt.Sprintf("redis://%s/0", addr)})
	if err == nil || !strings.Contains(err.Error(), "cannot reach redis at "+addr) {
		t.Fatalf("Open of a closed port: %v", err)
	}
	for _, bad := range []string{"", "http://127.0.0.1:6379", "redis://127.0.0.1:6379/notanumber"} { // not dialed
		if _, err := redis.Open(context.Background(), redis.Options{URL: bad}); err == nil {
			t.Errorf("Open(%q) succeeded", bad)
		}
	}
}
