package bolt

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/payguard/payguard/store"
)

func TestTicketCodecRoundTrip(t *testing.T) {
	in := store.Ticket{ID: "tkt_1", Key: "tk1:k", Option: []byte(`{"scheme":"exact"}`), ReservationID: "r1",
		ReceiptID: "rcpt_1", HoldID: "hold_1", Budget: "default", Day: "2026-11-27", AmountMicros: 1234,
		ExpiresAt: time.Date(3000, 1, 2, 3, 4, 5, 6, time.UTC)} // past int64 nanoseconds: kept whole
	got, err := decodeTicket("tk1:k", store.AppendTicket(nil, &in, false), nil)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(in)
	b, _ := json.Marshal(got)
	if !bytes.Equal(a, b) || !got.ExpiresAt.Equal(in.ExpiresAt) {
		t.Fatalf("round trip:\n%s\n%s", a, b)
	}
	// A shared ticket has no option of its own: without its bucket it is not read.
	if _, err := decodeTicket("tk1:k", store.AppendTicket(nil, &in, true), nil); err == nil {
		t.Fatal("a shared ticket decoded without its bucket")
	}
	for _, bad := range [][]byte{nil, {9}, {store.TicketInline, 200}, store.AppendTicket(nil, &in, true)[:10]} {
		if _, err := decodeTicket("k", bad, nil); err == nil {
			t.Fatalf("%x decoded", bad)
		}
	}
}

// Tickets of one key share one stored option; a ticket whose option differs keeps its own, and each is
// taken with its own option. The bucket goes with its last ticket.
func TestTicketsShareTheirKeysOption(t *testing.T) {
	ctx := context.Background()
	s, err := Open(filepath.Join(t.TempDir(), "p.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	exp := time.Now().Add(time.Hour)
	opts := [][]byte{[]byte(`{"a":1}`), []byte(`{"a":1}`), []byte(`{"a":2}`), []byte(`{"a":1}`)}
	for i, o := range opts {
		if _, err := s.ReserveTicket(ctx, "b", "2026-11-27", 1, 100, store.Ticket{Key: "tk1:same", Option: o, ExpiresAt: exp}); err != nil {
			t.Fatal(i, err)
		}
	}
	if err := s.flush(ctx); err != nil {
		t.Fatal(err)
	}
	s.db.View(func(tx *bbolt.Tx) error {
		perKey := tx.Bucket(bucketTickets).Bucket([]byte("tk1:same"))
		var shared, inline int
		perKey.ForEach(func(k, v []byte) error {
			switch {
			case !isTicketEntry(k):
			case v[0] == store.TicketShared:
				shared++
			case v[0] == store.TicketInline:
				inline++
			}
			return nil
		})
		if shared != 3 || inline != 1 || !bytes.Equal(perKey.Get(optionKey), opts[0]) {
			t.Fatalf("shared %d, inline %d, option %q", shared, inline, perKey.Get(optionKey))
		}
		return nil
	})
	for i := len(opts) - 1; i >= 0; i-- { // newest first
		tk, err := s.TakeTicket(ctx, "tk1:same", time.Now())
		if err != nil {
			t.Fatal(i, err)
		}
		if !bytes.Equal(tk.Option, opts[i]) || tk.Key != "tk1:same" || tk.Budget != "b" || tk.AmountMicros != 1 {
			t.Fatalf("ticket %d: %+v", i, tk)
		}
	}
	s.db.View(func(tx *bbolt.Tx) error {
		if tx.Bucket(bucketTickets).Bucket([]byte("tk1:same")) != nil {
			t.Fatal("the per-key bucket outlived its tickets (its shared option alone)")
		}
		return nil
	})
}

// A file written before the compact form holds JSON tickets: they are still taken and released.
func TestTicketsInTheJSONFormAreRead(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "p.db")
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	exp := time.Now().Add(time.Hour)
	old := store.Ticket{ID: "tkt_old", Key: "tk1:old", Option: []byte(`{"a":1}`), ReservationID: "r_old",
		Budget: "b", Day: "2026-11-27", AmountMicros: 5, ExpiresAt: exp.UTC()}
	v, _ := json.Marshal(old)
	err = s.db.Update(func(tx *bbolt.Tx) error {
		perKey, err := tx.Bucket(bucketTickets).CreateBucketIfNotExists([]byte(old.Key))
		if err != nil {
			return err
		}
		if err := perKey.Put(u64(1), v); err != nil {
			return err
		}
		return tx.Bucket(bucketTicketIDs).Put([]byte(old.ID), u64(uint64(exp.UnixNano())))
	})
	if err != nil {
		t.Fatal(err)
	}
	tk, err := s.TakeTicket(ctx, old.Key, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if tk.ID != old.ID || !bytes.Equal(tk.Option, old.Option) || tk.ReservationID != "r_old" {
		t.Fatalf("%+v", tk)
	}
	s.Close()
}
