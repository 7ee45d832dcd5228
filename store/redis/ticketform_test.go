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
// taken with its own, newest first, and the key's data goes with its last ticket. A ticket stored as JSON
// (before the compact form) is still taken.
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
	vals, err := rdb.HGetAll(ctx, prefix+"tdata:tk1:same").Result()
	if err != nil {
		t.Fatal(err)
	}
	var shared, inline int
	for f, v := range vals {
		switch {
		case f == "\x00opt":
			if v != string(opts[0]) {
				t.Fatalf("shared option %q", v)
			}
		case v[0] == store.TicketShared:
			shared++
		case v[0] == store.TicketInline:
			inline++
		}
	}
	if shared != 3 || inline != 1 {
		t.Fatalf("shared %d, inline %d: %q", shared, inline, vals)
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
	if n, _ := rdb.Exists(ctx, prefix+"tdata:tk1:same").Result(); n != 0 {
		t.Fatal("the key's data outlived its last ticket")
	}

	// A JSON ticket beside compact ones: stored first, taken last.
	old := store.Ticket{ID: "tkt_old", Key: "tk1:mixed", Option: []byte(`{"a":3}`), Budget: "b", Day: "2026-11-27",
		AmountMicros: 1, ExpiresAt: exp.UTC()}
	r, err := s.ReserveTicket(ctx, "b", "2026-11-27", 1, 100, old)
	if err != nil {
		t.Fatal(err)
	}
	old.ReservationID = r.ReservationID
	v, _ := json.Marshal(old)
	rdb.HSet(ctx, prefix+"tdata:tk1:mixed", "tkt_old", v)
	rdb.HDel(ctx, prefix+"tdata:tk1:mixed", "\x00opt")
	if _, err := s.ReserveTicket(ctx, "b", "2026-11-27", 1, 100, store.Ticket{Key: "tk1:mixed", Option: []byte(`{"a":4}`), ExpiresAt: exp}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`{"a":4}`, `{"a":3}`} {
		tk, err := s.TakeTicket(ctx, "tk1:mixed", time.Now())
		if err != nil || string(tk.Option) != want {
			t.Fatalf("took %+v, %v; want option %s", tk, err, want)
		}
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
