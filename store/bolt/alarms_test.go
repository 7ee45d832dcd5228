package bolt_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/payguard/payguard/store"
	"github.com/payguard/payguard/store/bolt"
)

// TestAlarmReadWithoutTransactionWhileNoneExists: Alarm answers without a read transaction while the file
// holds no alarm (noAlarms); an alarm raised after Open, and one in the file at Open, are found all the same.
// Fails when RaiseAlarm does not clear the flag, or when Open sets it for a file that holds an alarm.
func TestAlarmReadWithoutTransactionWhileNoneExists(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "payguard.db")
	now := time.Now()
	open := func() *bolt.Store {
		s, err := bolt.Open(path, bolt.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	s := open()
	if _, err := s.Alarm(ctx, "seller.example", now); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("no alarm yet: %v", err)
	}
	a := store.Alarm{Host: "seller.example", What: "settled above the maximum", At: now, Until: now.Add(time.Hour)}
	if err := s.RaiseAlarm(ctx, a); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Alarm(ctx, "seller.example", now); err != nil || got.What != a.What {
		t.Fatalf("alarm raised after Open: %+v, %v", got, err)
	}
	if _, err := s.Alarm(ctx, "other.example", now); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("another host: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = open()
	if got, err := s.Alarm(ctx, "seller.example", now); err != nil || got.What != a.What {
		t.Fatalf("alarm in the file at Open: %+v, %v", got, err)
	}
	if err := s.ClearAlarm(ctx, "seller.example", now); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Alarm(ctx, "seller.example", now); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("cleared: %v", err)
	}
	if err := s.RaiseAlarm(ctx, a); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Alarm(ctx, "seller.example", now.Add(2*time.Hour)); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("expired: %v", err)
	}
	s.Close()
}
