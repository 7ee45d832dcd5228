package bolt_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/payguard/payguard/store"
	"github.com/payguard/payguard/store/bolt"
)

// A full disk refuses every payment (the journal cannot be written) and the store says so to readiness
// until the disk has room again, found by Healthy's own probe. On the old code the store had no health:
// readiness stayed ready while every payment was refused.
func TestHealthFollowsTheJournal(t *testing.T) {
	s, err := bolt.Open(filepath.Join(t.TempDir(), "payguard.db"), bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	if _, err := s.Reserve(ctx, "b", "2026-11-25", 10_000, 1_000_000); err != nil {
		t.Fatal(err)
	}
	if err := store.Healthy(ctx, s); err != nil {
		t.Fatalf("healthy store: %v", err)
	}
	restore := bolt.FillDisk(s)
	if _, err := s.Reserve(ctx, "b", "2026-11-25", 10_000, 1_000_000); err == nil || !strings.Contains(err.Error(), "no space") {
		t.Fatalf("Reserve on a full disk: %v", err)
	}
	for range 2 { // the probe does not clear it while the disk is still full
		if err := store.Healthy(ctx, s); err == nil || !strings.Contains(err.Error(), "no space") {
			t.Fatalf("Healthy on a full disk: %v", err)
		}
	}
	restore()
	if err := store.Healthy(ctx, s); err != nil {
		t.Fatalf("Healthy once the disk has room: %v", err)
	}
	if _, err := s.Reserve(ctx, "b", "2026-11-25", 10_000, 1_000_000); err != nil {
		t.Fatal(err)
	}
	if st, err := s.State(ctx, "b", "2026-11-25"); err != nil || st.Reserved != 20_000 {
		t.Fatalf("state %+v, %v: the refused reservation must not count, the probe must leave no record", st, err)
	}
}
