package memory

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/payguard/payguard/store"
)

func TestPurgeDeletesExpired(t *testing.T) {
	var mu sync.Mutex
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	s := NewWithClock(func() time.Time { mu.Lock(); defer mu.Unlock(); return now })
	ctx := context.Background()
	for _, d := range []string{"2026-11-22", "2026-10-01"} {
		if _, err := s.Reserve(ctx, "agent", d, 10, 100); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := s.TakeTrial(ctx, "c", "2026-11-22", 3, 48*time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := s.MarkPaymentSeen(ctx, "d", time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := s.PutDelivery(ctx, "pay:d", []byte("result"), time.Hour); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ReserveTicket(ctx, "agent", "2026-11-22", 1, 100, store.Ticket{ID: "t", Key: "k", ExpiresAt: now.Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	now = now.Add(49 * time.Hour)
	mu.Unlock()
	if _, err := s.Reserve(ctx, "agent", "2026-11-24", 1, 100); err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.trials) != 0 || len(s.seen) != 0 || len(s.deliveries) != 0 || len(s.tickets) != 0 || len(s.ticketIDs) != 0 || len(s.budgets) != 2 {
		t.Fatalf("after the sweep: %d trials, %d digests, %d ticket keys, %d ticket ids, %d budget days; want 0, 0, 0, 0, 2",
			len(s.trials), len(s.seen), len(s.tickets), len(s.ticketIDs), len(s.budgets))
	}
}
