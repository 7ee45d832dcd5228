package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/payguard/payguard/internal/testredis"
	"github.com/payguard/payguard/store"
	"github.com/payguard/payguard/store/bolt"
	"github.com/payguard/payguard/store/redis"
)

// `payguard store init` writes a new Redis deployment's epoch once; the store then opens without
// init_if_empty; `reinit` wants --confirm.
func TestStoreInitRedis(t *testing.T) {
	prefix := fmt.Sprintf("payguard-test-storecmd-%d:", os.Getpid())
	redisURL := testredis.URL(t)
	cfg := filepath.Join(t.TempDir(), "payguard.yaml")
	yaml := fmt.Sprintf("store: {driver: redis, redis: {url: %q, prefix: %q, allow_volatile: true}}\n", redisURL, prefix)
	if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	opts := redis.Options{URL: redisURL, Prefix: prefix, AllowVolatile: true}
	t.Cleanup(func() {
		if s, err := redis.Open(context.Background(), opts); err == nil {
			s.Client().Del(context.Background(), prefix+"epoch")
			s.Close()
		}
	})
	if _, err := redis.Open(context.Background(), opts); !errors.Is(err, redis.ErrNoEpoch) {
		t.Fatalf("Open before init: %v", err)
	}
	if code, out, errs := runPG(t, "", "store", "init", "--config", cfg); code != 0 || !strings.Contains(out, "ledger epoch") {
		t.Fatalf("store init: %d %q %q", code, out, errs)
	}
	s, err := redis.Open(context.Background(), opts)
	if err != nil {
		t.Fatalf("Open after init: %v", err)
	}
	s.Close()
	if code, _, errs := runPG(t, "", "store", "init", "--config", cfg); code != 1 || !strings.Contains(errs, "already has") {
		t.Fatalf("second init: %d %q", code, errs)
	}
	if code, _, errs := runPG(t, "", "store", "reinit", "--config", cfg); code != 2 || !strings.Contains(errs, "--confirm") {
		t.Fatalf("reinit without --confirm: %d %q", code, errs)
	}
	if code, out, errs := runPG(t, "", "store", "reinit", "--confirm", "--config", cfg); code != 0 || !strings.Contains(out, "restart every replica") {
		t.Fatalf("reinit: %d %q %q", code, out, errs)
	}
}

// `payguard store reinit --confirm` is the recovery a refused bolt file's error names.
func TestStoreReinitBolt(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "payguard.db")
	s, err := bolt.Open(path, bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Reserve(context.Background(), "b", "2026-11-25", 10_000, 1_000_000); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := bolt.Open(path, bolt.Options{}); !errors.Is(err, store.ErrLedgerLost) || !strings.Contains(err.Error(), bolt.RecoveryCommand) {
		t.Fatalf("Open of the emptied file: %v", err)
	}
	cfg := filepath.Join(dir, "payguard.yaml")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf("store: {driver: bolt, path: %q}\n", path)), 0o600); err != nil {
		t.Fatal(err)
	}
	args := append(strings.Fields(bolt.RecoveryCommand)[1:], "--config", cfg)
	if code, out, errs := runPG(t, "", args...); code != 0 || !strings.Contains(out, "new ledger") {
		t.Fatalf("reinit: %d %q %q", code, out, errs)
	}
	s, err = bolt.Open(path, bolt.Options{})
	if err != nil {
		t.Fatalf("Open after reinit: %v", err)
	}
	s.Close()
}
