package storetest

import (
	"testing"
	"time"

	"github.com/payguard/payguard/store"
)

const retention = 48 * time.Hour

func wantTrial(t *testing.T, s store.Store, client, d string, limit int, ok bool, used int) {
	t.Helper()
	gotOK, gotUsed, err := s.TakeTrial(ctx, client, d, limit, retention)
	must(t, "TakeTrial", err)
	if gotOK != ok || gotUsed != used {
		t.Fatalf("TakeTrial(%s, %s, %d) = %v, %d; want %v, %d", client, d, limit, gotOK, gotUsed, ok, used)
	}
}

func testTrialLimit(t *testing.T, s store.Store) {
	for i := 1; i <= 3; i++ {
		wantTrial(t, s, "203.0.113.7", day, 3, true, i)
	}
	wantTrial(t, s, "203.0.113.7", day, 3, false, 3)
	wantTrial(t, s, "203.0.113.7", day, 3, false, 3) // refusals do not count
	wantTrial(t, s, "2001:db8::1", day, 3, true, 1)
	wantTrial(t, s, "203.0.113.7", "2026-11-23", 3, true, 1) // a new UTC day starts at zero
	wantTrial(t, s, "198.51.100.1", day, 0, false, 0)
	// A higher limit later lets the same counter continue.
	wantTrial(t, s, "203.0.113.7", day, 4, true, 4)

	_, _, err := s.TakeTrial(ctx, "", day, 3, retention)
	wantErr(t, "TakeTrial without client", err, store.ErrInvalid)
	_, _, err = s.TakeTrial(ctx, "c", "today", 3, retention)
	wantErr(t, "TakeTrial with a bad day", err, store.ErrInvalid)
	_, _, err = s.TakeTrial(ctx, "c", day, 3, 0)
	wantErr(t, "TakeTrial without retention", err, store.ErrInvalid)
}

// The one tiny-retention case: an entry is gone after its retention, so the count starts again. (Only
// "after", which time passing cannot make flaky; TestTrialLimit covers counting within the retention.)
func testTrialRetention(t *testing.T, s store.Store) {
	const short = 20 * time.Millisecond
	ok, used, err := s.TakeTrial(ctx, "c", day, 1, short)
	if err != nil || !ok || used != 1 {
		t.Fatalf("first TakeTrial = %v, %d, %v; want true, 1", ok, used, err)
	}
	time.Sleep(60 * time.Millisecond)
	ok, used, err = s.TakeTrial(ctx, "c", day, 1, short)
	if err != nil || !ok || used != 1 {
		t.Fatalf("TakeTrial after retention = %v, %d, %v; want true, 1", ok, used, err)
	}
}
