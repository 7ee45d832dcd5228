package redis_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/payguard/payguard/internal/testredis"
	"github.com/payguard/payguard/store"
	"github.com/payguard/payguard/store/redis"
	"github.com/payguard/payguard/store/storetest"
)

// redisURL is the Redis package testredis chose for this run: PAYGUARD_TEST_REDIS_URL, the real Redis at
// 127.0.0.1:6379 that CI starts, redis-server from PATH, or (with a printed notice) an embedded one.
func redisURL() string {
	s, err := testredis.Get()
	if err != nil {
		panic("no Redis for the redis store tests: " + err.Error())
	}
	return s.URL
}

// runPrefix keeps this run's keys apart from other runs and from a real deployment.
var (
	runPrefix = "payguard-test:" + store.NewID()[:12] + ":"
	storeSeq  atomic.Int64
)

// openTest opens a store on a fresh prefix and deletes every key under it when the test ends. An
// unreachable Redis fails the test: CI starts one, so its absence is a broken environment, not a skip.
func openTest(t testing.TB) *redis.Store {
	t.Helper()
	prefix := fmt.Sprintf("%s%d:", runPrefix, storeSeq.Add(1))
	s, err := redis.Open(context.Background(), redis.Options{URL: redisURL(), Prefix: prefix})
	if err != nil {
		t.Fatalf("opening the redis store at %s: %v", redisURL(), err)
	}
	t.Cleanup(func() { cleanPrefix(t, prefix) })
	return s
}

// cleanPrefix deletes the keys under prefix on a connection of its own (the store may be closed by now).
func cleanPrefix(t testing.TB, prefix string) {
	s, err := redis.Open(context.Background(), redis.Options{URL: redisURL(), Prefix: prefix})
	if err != nil {
		t.Errorf("cleaning up %s: %v", prefix, err)
		return
	}
	defer s.Close()
	ctx := context.Background()
	iter := s.Client().Scan(ctx, 0, prefix+"*", 1000).Iterator()
	var keys []string
	for iter.Next(ctx) {
		keys = append(keys, iter.Val())
	}
	if err := iter.Err(); err != nil {
		t.Errorf("scanning %s: %v", prefix, err)
		return
	}
	if len(keys) > 0 {
		if err := s.Client().Del(ctx, keys...).Err(); err != nil {
			t.Errorf("deleting %d keys under %s: %v", len(keys), prefix, err)
		}
	}
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return openTest(t) })
}

func openBench(b *testing.B) *redis.Store {
	s := openTest(b)
	b.Cleanup(func() { s.Close() })
	return s
}

func BenchmarkReserveCommit(b *testing.B) { storetest.BenchReserveCommit(b, openBench(b)) }

func BenchmarkReserveCommitParallel(b *testing.B) {
	b.SetParallelism(8)
	storetest.BenchReserveCommitParallel(b, openBench(b))
}

// A day whose first reservation is refused still leaves a ledger hash behind (the script counts, then
// undoes): it must expire like any ledger day, or every refused-only budget leaves a key forever.
func TestRefusedFirstReservationExpires(t *testing.T) {
	s := openTest(t)
	defer s.Close()
	ctx := context.Background()
	if _, err := s.Reserve(ctx, "zero-cap", "2026-11-22", 1, 0); !errors.Is(err, store.ErrBudgetExceeded) {
		t.Fatal(err)
	}
	k := s.Prefix() + "ledger:2026-11-22:zero-cap"
	n, _ := s.Client().Exists(ctx, k).Result()
	ttl, err := s.Client().PTTL(ctx, k).Result()
	if err != nil || (n == 1 && ttl < 0) {
		t.Errorf("ledger key %s: exists %d, PTTL %v (%v); want an expiry", k, n, ttl, err)
	}
}
