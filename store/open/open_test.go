package open_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/payguard/payguard/config"
	"github.com/payguard/payguard/internal/testredis"
	"github.com/payguard/payguard/store"
	"github.com/payguard/payguard/store/bolt"
	"github.com/payguard/payguard/store/memory"
	"github.com/payguard/payguard/store/open"
	"github.com/payguard/payguard/store/redis"
)

func TestOpenDrivers(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "payguard.db")
	s, err := open.FromConfig(config.StoreConfig{Driver: "bolt", Path: path})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := s.(*bolt.Store); !ok {
		t.Fatalf("bolt driver opened %T", s)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("bolt file not created at %s: %v", path, err)
	}
	s.Close()

	s, err = open.FromConfig(config.StoreConfig{Driver: "memory"})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := s.(*memory.Store); !ok {
		t.Fatalf("memory driver opened %T", s)
	}
	s.Close()

	if _, err := open.FromConfig(config.StoreConfig{Driver: "sqlite"}); err == nil || !strings.Contains(err.Error(), `unknown driver "sqlite"`) {
		t.Fatalf("unknown driver: %v", err)
	}
	if _, err := open.FromConfig(config.StoreConfig{Driver: "redis", Redis: config.RedisConfig{Prefix: "x:"}}); err == nil {
		t.Fatal("redis without a URL opened")
	}
}

func TestFromConfig(t *testing.T) {
	c, err := config.Parse([]byte("store: {driver: redis, redis: {url_env: PAYGUARD_TEST_OPEN_URL, prefix: 'payguard-test-open:', allow_volatile: true, init_if_empty: true}}"))
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("PAYGUARD_TEST_OPEN_URL", testredis.URL(t))
	s, err := open.FromConfig(c.Store)
	if err != nil {
		t.Fatalf("opening the redis driver: %v", err)
	}
	defer s.Close()
	if rs, ok := s.(*redis.Store); !ok || rs.Prefix() != "payguard-test-open:" {
		t.Fatalf("FromConfig opened %T, want a redis store with prefix payguard-test-open:", s)
	}
	// init_if_empty wrote the prefix's ledger epoch (the shared test Redis runs without persistence, which
	// allow_volatile accepts); it is the one key this test leaves, so remove it.
	defer s.(*redis.Store).Client().Del(context.Background(), "payguard-test-open:epoch")
	// Touch nothing else but read: State of an unknown budget writes no key.
	if st, err := s.State(context.Background(), "none", "2026-11-22"); err != nil || st != (store.BudgetState{Day: "2026-11-22"}) {
		t.Fatalf("State = %+v, %v", st, err)
	}

	t.Setenv("PAYGUARD_TEST_OPEN_URL", "")
	if _, err := open.FromConfig(c.Store); err == nil {
		t.Fatal("FromConfig with an empty URL variable opened")
	}
}
