package storetest

import (
	"bytes"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/payguard/payguard/store"
)

func newTicket(id, key string, expires time.Time) store.Ticket {
	return store.Ticket{
		ID: id, Key: key, Option: []byte(`{"scheme":"exact","network":"eip155:8453","amount":"10000"}`),
		ReceiptID: "rcpt-" + id, HoldID: "hold-" + id, Budget: "agent", Day: day, AmountMicros: 10_000, ExpiresAt: expires,
	}
}

// putTicket stores tk the one way a store offers, ReserveTicket (with a reservation of its amount in its
// budget, under a cap that never refuses), and returns the stored ticket.
func putTicket(s store.Store, tk store.Ticket) (store.Ticket, error) {
	return s.ReserveTicket(ctx, tk.Budget, tk.Day, tk.AmountMicros, math.MaxInt64, tk)
}

// mustPut is putTicket for the cases where storing must succeed.
func mustPut(t *testing.T, what string, s store.Store, tk store.Ticket) store.Ticket {
	t.Helper()
	stored, err := putTicket(s, tk)
	must(t, what, err)
	return stored
}

func testTicketPutTake(t *testing.T, s store.Store) {
	tk := newTicket("t1", "GET https://seller.example/a eip155:8453 0xasset 0xpay 10000", base.Add(time.Minute))
	stored := mustPut(t, "store a ticket", s, tk)
	if stored.ReservationID == "" {
		t.Fatalf("stored ticket %+v names no reservation", stored)
	}
	_, err := putTicket(s, newTicket("t1", "other", base.Add(time.Minute)))
	wantErr(t, "storing a ticket with a duplicate id", err, store.ErrConflict)
	_, err = s.TakeTicket(ctx, "other", base)
	wantErr(t, "TakeTicket of a key whose put was refused", err, store.ErrNotFound)

	got, err := s.TakeTicket(ctx, tk.Key, base)
	must(t, "TakeTicket", err)
	if got.ID != tk.ID || got.Key != tk.Key || !bytes.Equal(got.Option, tk.Option) ||
		got.ReservationID != stored.ReservationID || got.ReceiptID != tk.ReceiptID || got.HoldID != tk.HoldID || got.Budget != tk.Budget || got.Day != tk.Day ||
		got.AmountMicros != tk.AmountMicros || !got.ExpiresAt.Equal(tk.ExpiresAt) || !got.Used {
		t.Fatalf("TakeTicket:\n got %+v\nwant %+v marked used", got, tk)
	}
	_, err = s.TakeTicket(ctx, tk.Key, base)
	wantErr(t, "second TakeTicket", err, store.ErrNotFound)

	// A ticket without an id gets one.
	anon := newTicket("", "anon", base.Add(time.Minute))
	mustPut(t, "store a ticket without id", s, anon)
	got, err = s.TakeTicket(ctx, "anon", base)
	must(t, "TakeTicket anon", err)
	if got.ID == "" {
		t.Fatal("a ticket stored without an id came back without one")
	}
}

func testTicketNewestUnexpired(t *testing.T, s store.Store) {
	mustPut(t, "put old", s, newTicket("old", "k", base.Add(time.Hour)))
	mustPut(t, "put expired", s, newTicket("expired", "k", base.Add(-time.Second)))
	mustPut(t, "put new", s, newTicket("new", "k", base.Add(time.Minute)))
	mustPut(t, "put edge", s, newTicket("edge", "k2", base))

	// Newest = put last; expired ones are skipped; ExpiresAt == now is still valid.
	for _, want := range []string{"new", "old"} {
		got, err := s.TakeTicket(ctx, "k", base)
		must(t, "TakeTicket", err)
		if got.ID != want {
			t.Fatalf("TakeTicket = %s, want %s", got.ID, want)
		}
	}
	_, err := s.TakeTicket(ctx, "k", base)
	wantErr(t, "TakeTicket with only an expired ticket left", err, store.ErrNotFound)
	_, err = s.TakeTicket(ctx, "k2", base.Add(time.Nanosecond))
	wantErr(t, "TakeTicket just after expiry", err, store.ErrNotFound)
	got, err := s.TakeTicket(ctx, "k2", base)
	must(t, "TakeTicket at ExpiresAt", err)
	if got.ID != "edge" {
		t.Fatalf("TakeTicket = %s, want edge", got.ID)
	}
}

func testTicketInvalid(t *testing.T, s store.Store) {
	_, err := putTicket(s, newTicket("x", "k", time.Time{}))
	wantErr(t, "a ticket without expiry", err, store.ErrInvalid)
	_, err = putTicket(s, newTicket("y", "", base))
	wantErr(t, "a ticket without key", err, store.ErrInvalid)
	used := newTicket("z", "k", base)
	used.Used = true
	_, err = putTicket(s, used)
	wantErr(t, "a ticket stored already used", err, store.ErrInvalid)
	_, err = s.TakeTicket(ctx, "k", base.Add(-time.Hour))
	wantErr(t, "TakeTicket after refused puts", err, store.ErrNotFound)
	wantState(t, s, "agent", day, 0, 0) // refused tickets reserve nothing
}

func testPaymentSeen(t *testing.T, s store.Store) {
	must(t, "first MarkPaymentSeen", s.MarkPaymentSeen(ctx, "sha256:aa", time.Hour))
	wantErr(t, "replayed MarkPaymentSeen", s.MarkPaymentSeen(ctx, "sha256:aa", time.Hour), store.ErrAlreadyUsed)
	must(t, "another digest", s.MarkPaymentSeen(ctx, "sha256:bb", time.Hour))
	wantErr(t, "MarkPaymentSeen with no ttl", s.MarkPaymentSeen(ctx, "sha256:cc", 0), store.ErrInvalid)
	wantErr(t, "MarkPaymentSeen with no digest", s.MarkPaymentSeen(ctx, "", time.Hour), store.ErrInvalid)
	// A forgotten mark may be made again; forgetting an unknown digest is no error; the other stays.
	must(t, "ForgetPaymentSeen", s.ForgetPaymentSeen(ctx, "sha256:aa"))
	must(t, "MarkPaymentSeen after ForgetPaymentSeen", s.MarkPaymentSeen(ctx, "sha256:aa", time.Hour))
	must(t, "ForgetPaymentSeen of an unknown digest", s.ForgetPaymentSeen(ctx, "sha256:never"))
	wantErr(t, "MarkPaymentSeen of a digest not forgotten", s.MarkPaymentSeen(ctx, "sha256:bb", time.Hour), store.ErrAlreadyUsed)
	wantErr(t, "ForgetPaymentSeen with no digest", s.ForgetPaymentSeen(ctx, ""), store.ErrInvalid)

	// The one tiny-TTL case: a digest is forgotten after its ttl. (Only "after": a check "still remembered
	// within 20 ms" would be flaky on a loaded machine; the hour-long cases above cover remembering.)
	must(t, "short-lived digest", s.MarkPaymentSeen(ctx, "sha256:short", 20*time.Millisecond))
	time.Sleep(60 * time.Millisecond)
	must(t, "digest after its ttl", s.MarkPaymentSeen(ctx, "sha256:short", time.Hour))
	wantErr(t, "replay of the renewed digest", s.MarkPaymentSeen(ctx, "sha256:short", time.Hour), store.ErrAlreadyUsed)
}

// ReserveTicket: the reservation and its ticket together; over the cap, neither.
func testReserveTicket(t *testing.T, s store.Store) {
	tk := newTicket("rt1", "reserve-ticket-key", base.Add(time.Minute))
	tk.ReservationID, tk.Budget, tk.Day, tk.AmountMicros = "ignored", "ignored", "ignored", 1
	got, err := s.ReserveTicket(ctx, "agent", day, 60, 100, tk)
	must(t, "ReserveTicket", err)
	if got.ReservationID == "" || got.ReservationID == "ignored" || got.Budget != "agent" || got.Day != day ||
		got.AmountMicros != 60 || got.ID != "rt1" || got.Used {
		t.Fatalf("ReserveTicket returned %+v: want the store's reservation id, budget agent, day %s, 60 micros", got, day)
	}
	wantState(t, s, "agent", day, 0, 60)

	// Over the cap: refused, and no ticket appears under the key.
	_, err = s.ReserveTicket(ctx, "agent", day, 41, 100, newTicket("rt2", "over-cap-key", base.Add(time.Minute)))
	wantErr(t, "ReserveTicket over the cap", err, store.ErrBudgetExceeded)
	_, err = s.TakeTicket(ctx, "over-cap-key", base)
	wantErr(t, "TakeTicket of a refused ReserveTicket", err, store.ErrNotFound)
	wantState(t, s, "agent", day, 0, 60)

	// A duplicate ticket id is refused and reserves nothing (redis reserves first: it may keep the amount).
	_, err = s.ReserveTicket(ctx, "agent", day, 1, 100, newTicket("rt1", "dup-key", base.Add(time.Minute)))
	wantErr(t, "ReserveTicket with a duplicate ticket id", err, store.ErrConflict)

	// The ticket is taken like any other and names a reservation Commit knows.
	taken, err := s.TakeTicket(ctx, "reserve-ticket-key", base)
	must(t, "TakeTicket", err)
	if taken.ID != "rt1" || taken.ReservationID != got.ReservationID || taken.AmountMicros != 60 {
		t.Fatalf("taken %+v, want the ticket ReserveTicket stored (%+v)", taken, got)
	}
	must(t, "Commit of the ticket's reservation", s.Commit(ctx, "agent", day, taken.ReservationID))
	st, err := s.State(ctx, "agent", day)
	must(t, "State", err)
	if st.Spent != 60 {
		t.Fatalf("spent %d after committing the ticket's reservation, want 60", st.Spent)
	}

	_, err = s.ReserveTicket(ctx, "agent", day, -1, 100, newTicket("rt3", "k3", base.Add(time.Minute)))
	wantErr(t, "ReserveTicket of a negative amount", err, store.ErrInvalid)
	_, err = s.ReserveTicket(ctx, "agent", day, 1, 100, newTicket("rt4", "k4", time.Time{}))
	wantErr(t, "ReserveTicket of a ticket without expiry", err, store.ErrInvalid)
}

// Concurrent ReserveTicket against one cap: exactly the reservations that fit succeed, each with its ticket.
func testConcurrentReserveTicket(t *testing.T, s store.Store) {
	const amount, capMicros = 7, 100
	errs := race(workers, func(i int) error {
		_, err := s.ReserveTicket(ctx, "shared", day, amount, capMicros,
			newTicket(fmt.Sprintf("crt%d", i), fmt.Sprintf("crt-key-%d", i), base.Add(time.Minute)))
		return err
	})
	won := countOK(t, "ReserveTicket", errs, store.ErrBudgetExceeded)
	if won != capMicros/amount {
		t.Fatalf("%d of %d ReserveTicket calls of %d against cap %d succeeded, want %d", won, workers, amount, capMicros, capMicros/amount)
	}
	wantState(t, s, "shared", day, 0, int64(won*amount))
	for i, err := range errs {
		_, terr := s.TakeTicket(ctx, fmt.Sprintf("crt-key-%d", i), base)
		if (err == nil) != (terr == nil) {
			t.Fatalf("call %d: ReserveTicket error %v but TakeTicket error %v", i, err, terr)
		}
	}
}
