package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/payguard/payguard/internal/testredis"
	"github.com/payguard/payguard/store/bolt"
)

// What an operator sees when the ledger it would start on forgot the day (issue 18 items 5 and 6): `payguard
// proxy` and `payguard serve` exit 1 before they listen, and say why and what to run. On the old code a
// payguard.db emptied to 0 bytes started a fresh ledger ($0.20 of spend became $0), and a Redis that keeps
// nothing across a restart was accepted without a word.
func TestStartRefusesALedgerThatForgot(t *testing.T) {
	// The admin listener on a port of its own too (the default, 8403, may be another process's).
	const servePayTo = "server: {contact: 'mailto:ops@example.com', fees: {network: 'eip155:84532', pay_to: '0x90F79bf6EB2c4f870365E785982E1f101E93b906'}}\n" +
		"admin: {listen: '127.0.0.1:0'}\n"
	t.Run("emptied payguard.db", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "payguard.db")
		s, err := bolt.Open(path, bolt.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for range 20 {
			if _, err := s.Reserve(context.Background(), "default", "2026-11-25", 10_000, 1_000_000); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(path, 0); err != nil {
			t.Fatal(err)
		}
		cfg := filepath.Join(t.TempDir(), "payguard.yaml")
		if err := os.WriteFile(cfg, []byte(servePayTo), 0o600); err != nil {
			t.Fatal(err)
		}
		for _, cmd := range []string{"proxy", "serve"} {
			code, errs := startFails(t, cmd, "--offline", "--config", cfg, "--data-dir", dir, "--listen", "127.0.0.1:0")
			if code != 1 || !strings.Contains(errs, "empty (0 bytes)") || !strings.Contains(errs, bolt.RecoveryCommand) {
				t.Errorf("payguard %s on an emptied payguard.db: exit %d, stderr %q; want 1 naming the damage and %q",
					cmd, code, errs, bolt.RecoveryCommand)
			}
			if st, err := os.Stat(path); err != nil || st.Size() != 0 {
				t.Fatalf("payguard %s wrote a new ledger over the emptied file: %v", cmd, err)
			}
		}
	})
	t.Run("volatile redis", func(t *testing.T) {
		r := testredis.StartOwn(t)
		cfg := filepath.Join(t.TempDir(), "payguard.yaml")
		yaml := fmt.Sprintf("%sstore: {driver: redis, redis: {url: %q, init_if_empty: true}}\n", servePayTo, r.URL())
		if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
			t.Fatal(err)
		}
		for _, cmd := range []string{"proxy", "serve"} {
			code, errs := startFails(t, cmd, "--offline", "--config", cfg, "--data-dir", t.TempDir(), "--listen", "127.0.0.1:0")
			if code != 1 || !strings.Contains(errs, "keeps nothing across a restart") || !strings.Contains(errs, "allow_volatile") {
				t.Errorf("payguard %s on a Redis without persistence: exit %d, stderr %q; want 1 naming appendonly and allow_volatile", cmd, code, errs)
			}
		}
	})
}

// startFails runs `payguard CMD ARGS...`, which must exit before it serves; a start that does not end within
// 30 s (a payguard serving on the forgetful ledger) fails the test instead of hanging it.
func startFails(t *testing.T, args ...string) (int, string) {
	t.Helper()
	type result struct {
		code int
		errs string
	}
	done := make(chan result, 1)
	go func() {
		var out, errb bytes.Buffer
		code := runMain(args, strings.NewReader(""), &out, &errb)
		done <- result{code, errb.String()}
	}()
	select {
	case r := <-done:
		return r.code, r.errs
	case <-time.After(30 * time.Second):
		t.Fatalf("payguard %s started on a ledger that forgot (still running after 30 s)", strings.Join(args, " "))
		return 0, ""
	}
}
