package bolt

import (
	"context"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/payguard/payguard/internal/testutil"
	"github.com/payguard/payguard/store"
)

func (s *Store) countKeys(t *testing.T, bucket []byte) int {
	n := 0
	err := s.db.View(func(tx *bbolt.Tx) error {
		return tx.Bucket(bucket).ForEach(func(_, _ []byte) error { n++; return nil })
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// Expired trial counters, payment digests, tickets and old ledger days are deleted from the file, not just
// ignored, so the file does not grow without bound.
func TestPurgeDeletesExpired(t *testing.T) {
	clock := testutil.NewClock(time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC))
	s, err := Open(filepath.Join(t.TempDir(), "p.db"), Options{Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	today, old := "2026-11-22", "2026-10-01"
	for _, d := range []string{today, old} {
		id, err := s.Reserve(ctx, "agent", d, 10, 100)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Commit(ctx, "agent", d, id); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := s.TakeTrial(ctx, "203.0.113.7", today, 3, 48*time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := s.MarkPaymentSeen(ctx, "sha256:aa", time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := s.PutDelivery(ctx, "pay:aa", []byte("result"), time.Hour); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ReserveTicket(ctx, "agent", today, 1, 100, store.Ticket{ID: "t", Key: "k", ExpiresAt: clock.Now().Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	if err := s.flush(ctx); err != nil { // the ticket in the file (ReserveTicket only journals it)
		t.Fatal(err)
	}
	before := map[string]int{}
	for _, b := range allBuckets {
		before[string(b)] = s.countKeys(t, b)
	}

	// Past the trial retention, the digest ttl and the ticket; old is now more than 35 days back. The
	// Reserve is a write that triggers the sweep.
	clock.Advance(49 * time.Hour)
	if _, err := s.Reserve(ctx, "agent", "2026-11-24", 1, 100); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]int{
		"trial": 0, "seen": 0, "deliveries": 0, "ticketids": 0, "tickets": 0, "ticketexpiry": 0,
		"budgets": 2, "reservations": 3, // today's two (one the ticket's, kept after it expired) and 2026-11-24's; 2026-10-01's is gone
	} {
		if got := s.countKeys(t, []byte(name)); got != want {
			t.Errorf("bucket %s: %d keys after the sweep (had %d), want %d", name, got, before[name], want)
		}
	}
	if st, err := s.State(ctx, "agent", old); err != nil || st.Spent != 0 {
		t.Errorf("old day after the sweep = %+v, %v; want gone", st, err)
	}
	if st, err := s.State(ctx, "agent", today); err != nil || st.Spent != 10 {
		t.Errorf("today after the sweep = %+v, %v; want spent 10", st, err)
	}
}

// A store nobody writes to still deletes an expired trial counter (a client's IP address): the applier purges
// while idle, so the counter does not outlive its retention by as long as the store stays quiet.
func TestIdleStorePurgesExpiredTrialCounters(t *testing.T) {
	var purges atomic.Int64
	// twoMorePurges waits for two more idle purges: the second began after this call, so it read the clock
	// as it is now and finished (the applier runs one purge at a time).
	twoMorePurges := func() {
		t.Helper()
		n := purges.Load()
		testutil.Eventually(t, 10*time.Second, func() bool { return purges.Load() >= n+2 }, "two idle purges")
	}
	clock := testutil.NewClock(time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC))
	s, err := Open(filepath.Join(t.TempDir(), "p.db"), Options{Now: clock.Now, idlePurge: 10 * time.Millisecond,
		idlePurged: func() { purges.Add(1) }})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	if _, _, err := s.TakeTrial(ctx, "203.0.113.7", "2026-11-22", 3, 48*time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := s.flush(ctx); err != nil {
		t.Fatal(err)
	}
	// Idle, within the retention: kept.
	clock.Advance(47 * time.Hour)
	twoMorePurges()
	if n := s.countKeys(t, bucketTrial); n != 1 {
		t.Fatalf("%d trial counters within the retention, want 1", n)
	}
	// Idle, past it: deleted with no write to trigger the sweep.
	clock.Advance(2 * time.Hour)
	twoMorePurges()
	if n := s.countKeys(t, bucketTrial); n != 0 {
		t.Fatalf("an idle store kept %d trial counters past their retention", n)
	}
}

// A file from before the tickets' expiry index gets one when opened: its expired tickets and ids are swept,
// its live ticket stays takeable and is swept once it expires.
func TestTicketExpiryIndexBuiltForOlderFiles(t *testing.T) {
	clock := testutil.NewClock(time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC))
	path := filepath.Join(t.TempDir(), "p.db")
	s, err := Open(path, Options{Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for id, ttl := range map[string]time.Duration{"soon": time.Minute, "later": time.Hour, "taken": time.Minute} {
		tk := store.Ticket{ID: id, Key: "key-" + id, ExpiresAt: clock.Now().Add(ttl)}
		if _, err := s.ReserveTicket(ctx, "agent", "2026-11-22", 1, 100, tk); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.TakeTicket(ctx, "key-taken", clock.Now()); err != nil {
		t.Fatal(err)
	}
	// As an older payguard left it: no index.
	if err := s.db.Update(func(tx *bbolt.Tx) error { return tx.DeleteBucket(bucketTicketExpiry) }); err != nil {
		t.Fatal(err)
	}
	s.Close()

	clock.Advance(10 * time.Minute) // "soon" and "taken" expired, "later" not
	s, err = Open(path, Options{Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if n := s.countKeys(t, bucketTicketIDs); n != 1 {
		t.Errorf("ticket ids after opening: %d, want 1 (later)", n)
	}
	if n := s.countKeys(t, bucketTickets); n != 1 {
		t.Errorf("ticket keys after opening: %d, want 1 (later)", n)
	}
	clock.Advance(2 * time.Hour)
	if _, err := s.Reserve(ctx, "agent", "2026-11-22", 1, 100); err != nil { // a write that sweeps
		t.Fatal(err)
	}
	for _, b := range [][]byte{bucketTicketIDs, bucketTickets, bucketTicketExpiry} {
		if n := s.countKeys(t, b); n != 0 {
			t.Errorf("bucket %s after \"later\" expired: %d keys, want 0", b, n)
		}
	}
}
