package bolt

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/payguard/payguard/store"
)

// One commit applies many tickets of one key (batchWrites keeps the key's bucket and shared option for the
// batch, and builds keys and values in buffers it reuses). Each ticket must come back as it was stored,
// newest first, with its own option: the first ticket of a key shares its option, a later one with another
// option keeps its own, and an empty option is never made the key's shared one (a ticket stored before with
// the shared option would then read the later ticket's). Read both from the batch just committed and from
// the file after a restart.
func TestOneBatchManyTicketsOfAKey(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.db")
	s, err := Open(path, Options{CommitDelay: time.Hour}) // nothing commits until TakeTicket asks
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	exp := time.Now().Add(time.Hour)
	x, y, z := []byte(`{"a":"x"}`), []byte(`{"a":"y"}`), []byte(`{"a":"z"}`)
	put := []store.Ticket{
		{ID: "t1", Key: "k", Option: x}, {ID: "t2", Key: "k", Option: y}, {ID: "t3", Key: "k2", Option: nil},
		{ID: "t4", Key: "k", Option: x}, {ID: "t5", Key: "k2", Option: z}, {ID: "t6", Key: "k2", Option: z},
		{ID: "t7", Key: "k", Option: y},
	}
	for i, tk := range put {
		tk.ExpiresAt = exp.Add(time.Duration(i) * time.Second)
		if _, err := s.ReserveTicket(ctx, "agent", logDay, int64(10+i), 1<<40, tk); err != nil {
			t.Fatal(err)
		}
	}
	// Taken newest first: t7 from the committed batch, the rest after a restart.
	take := func(s *Store, key, id string, opt []byte, amount int64) {
		t.Helper()
		got, err := s.TakeTicket(ctx, key, time.Now())
		if err != nil {
			t.Fatalf("take %s: %v", id, err)
		}
		if got.ID != id || string(got.Option) != string(opt) || got.AmountMicros != amount || got.Key != key {
			t.Fatalf("took %+v (option %s), want %s with option %s, amount %d", got, got.Option, id, opt, amount)
		}
	}
	take(s, "k", "t7", y, 16)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if s, err = Open(path, Options{}); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	take(s, "k", "t4", x, 13)
	take(s, "k", "t2", y, 11)
	take(s, "k", "t1", x, 10)
	take(s, "k2", "t6", z, 15)
	take(s, "k2", "t5", z, 14)
	take(s, "k2", "t3", nil, 12)
	if _, err := s.TakeTicket(ctx, "k", time.Now()); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a ticket of k left: %v", err)
	}
	st, err := s.State(ctx, "agent", logDay)
	if err != nil || st.Reserved != 10+11+12+13+14+15+16 {
		t.Fatalf("state %+v, %v: every reservation counts once", st, err)
	}
}
