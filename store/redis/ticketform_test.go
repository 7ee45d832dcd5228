package redis_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/payguard/payguard/store"
	"github.com/payguard/payguard/store/redis"
)

// Tickets of one key share one stored option (issue 36); one whose option differs keeps its own; each is
// taken with its own, newest first, and the key's option goes with its last ticket. Each ticket is one list
// entry: its expiry and its compact form.
func TestTicketsShareTheirKeysOption(t *testing.T) {
	ctx := context.Background()
	prefix := fmt.Sprintf("%sform%d:", runPrefix, storeSeq.Add(1))
	s, err := redis.Open(ctx, testOptions(prefix))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cleanPrefix(t, prefix) })
	ro, _ := goredis.ParseURL(redisURL())
	rdb := goredis.NewClient(ro)
	defer rdb.Close()
	exp := time.Now().Add(time.Hour)
	opts := [][]byte{[]byte(`{"a":1}`), []byte(`{"a":1}`), []byte(`{"a":2}`), []byte(`{"a":1}`)}
	for i, o := range opts {
		if _, err := s.ReserveTicket(ctx, "b", "2026-11-27", 1, 100, store.Ticket{Key: "tk1:same", Option: o, ExpiresAt: exp}); err != nil {
			t.Fatal(i, err)
		}
	}
	if v, _ := rdb.Get(ctx, prefix+"topt:tk1:same").Result(); v != string(opts[0]) {
		t.Fatalf("shared option %q", v)
	}
	entries, err := rdb.LRange(ctx, prefix+"tq:tk1:same", 0, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	var shared, inline int
	for _, v := range entries {
		switch {
		case len(v) < 21:
			t.Fatalf("entry %q", v)
		case v[20] == store.TicketShared:
			shared++
		case v[20] == store.TicketInline:
			inline++
		}
	}
	if shared != 3 || inline != 1 {
		t.Fatalf("shared %d, inline %d: %q", shared, inline, entries)
	}
	for i := len(opts) - 1; i >= 0; i-- {
		tk, err := s.TakeTicket(ctx, "tk1:same", time.Now())
		if err != nil {
			t.Fatal(i, err)
		}
		if !bytes.Equal(tk.Option, opts[i]) || tk.Key != "tk1:same" || tk.Budget != "b" || tk.AmountMicros != 1 || !tk.Used {
			t.Fatalf("ticket %d: %+v", i, tk)
		}
	}
	if n, _ := rdb.Exists(ctx, prefix+"topt:tk1:same", prefix+"tq:tk1:same").Result(); n != 0 {
		t.Fatal("the key's option outlived its last ticket")
	}
}

// Tickets in the layout before issue 36's second round (tid:<id>, tlist:<key>, tdata:<key>, written by an
// older replica during a rolling upgrade) are still taken, JSON or compact, after the new layout's, and
// their ids are not given out again.
func TestTicketsOfTheOlderLayoutAreRead(t *testing.T) {
	ctx := context.Background()
	prefix := fmt.Sprintf("%sold%d:", runPrefix, storeSeq.Add(1))
	s, err := redis.Open(ctx, testOptions(prefix))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cleanPrefix(t, prefix) })
	ro, _ := goredis.ParseURL(redisURL())
	rdb := goredis.NewClient(ro)
	defer rdb.Close()
	exp := time.Now().Add(time.Hour).UTC()
	// Reservations made the new way, then their tickets moved into the older layout by hand.
	var olds []store.Ticket
	for i, o := range []string{`{"a":3}`, `{"a":5}`} {
		tk, err := s.ReserveTicket(ctx, "b", "2026-11-27", 1, 100, store.Ticket{ID: fmt.Sprint("tkt_old", i), Key: "tk1:mixed", Option: []byte(o), ExpiresAt: exp})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.TakeTicket(ctx, "tk1:mixed", time.Now()); err != nil { // empties the new layout again
			t.Fatal(err)
		}
		olds = append(olds, tk)
	}
	sortable := fmt.Sprintf("%020d", uint64(exp.UnixNano())^(1<<63))
	jsonForm, _ := json.Marshal(olds[0])
	rdb.HSet(ctx, prefix+"tdata:tk1:mixed", olds[0].ID, jsonForm, olds[1].ID, store.AppendTicket(nil, &olds[1], false))
	rdb.RPush(ctx, prefix+"tlist:tk1:mixed", sortable+" "+olds[0].ID, sortable+" "+olds[1].ID)
	rdb.Set(ctx, prefix+"tid:tkt_older", "1", time.Hour)
	// The reservations were pinned by the takes above; that does not matter to the ticket's form.
	if _, err := s.ReserveTicket(ctx, "b", "2026-11-27", 1, 100, store.Ticket{ID: "tkt_older", Key: "tk1:other", Option: []byte(`{}`), ExpiresAt: exp}); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("a ticket id the older layout holds was given out again: %v", err)
	}
	if _, err := s.ReserveTicket(ctx, "b", "2026-11-27", 1, 100, store.Ticket{Key: "tk1:mixed", Option: []byte(`{"a":4}`), ExpiresAt: exp}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`{"a":4}`, `{"a":5}`, `{"a":3}`} {
		tk, err := s.TakeTicket(ctx, "tk1:mixed", time.Now())
		if err != nil || string(tk.Option) != want {
			t.Fatalf("took %+v, %v; want option %s", tk, err, want)
		}
	}
	if _, err := s.TakeTicket(ctx, "tk1:mixed", time.Now()); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a fourth take: %v", err)
	}
}

// The reservation and the ticket are one script: a ticket id already taken reserves nothing, and a
// reservation over the cap leaves no ticket id behind.
func TestReserveTicketIsOneWrite(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	exp := time.Now().Add(time.Hour)
	tk := store.Ticket{ID: "tkt_dup", Key: "tk1:one", Option: []byte(`{}`), ExpiresAt: exp}
	if _, err := s.ReserveTicket(ctx, "b", "2026-11-27", 5, 100, tk); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ReserveTicket(ctx, "b", "2026-11-27", 5, 100, tk); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("duplicate id: %v", err)
	}
	if st, _ := s.State(ctx, "b", "2026-11-27"); st.Reserved != 5 {
		t.Fatalf("reserved %d after a refused duplicate, want 5", st.Reserved)
	}
	over := store.Ticket{ID: "tkt_over", Key: "tk1:one", Option: []byte(`{}`), ExpiresAt: exp}
	if _, err := s.ReserveTicket(ctx, "b", "2026-11-27", 96, 100, over); !errors.Is(err, store.ErrBudgetExceeded) {
		t.Fatalf("over the cap: %v", err)
	}
	over.AmountMicros = 0
	if _, err := s.ReserveTicket(ctx, "b", "2026-11-27", 95, 100, over); err != nil {
		t.Fatalf("the id of a ticket refused over the cap stayed taken: %v", err)
	}
}
