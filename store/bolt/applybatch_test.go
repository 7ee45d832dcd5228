package bolt

import (
	"context"
	"errors"
	"fmt"
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

// The replay goes through the same batch (applyOps in one transaction): a journal whose records are partly in
// the file already (the commit happened, the journal was not emptied: a kill -9 between the two), replayed
// twice (killed again during the first replay's start), must leave each ticket once, with its own option,
// and count each reservation once, while the per-batch cache of a key's bucket and option sees both tickets
// that were in the file and tickets the replay adds.
func TestReplayOfABatchOfOneKeyTwice(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.db")
	ctx := context.Background()
	s, err := Open(path, Options{CommitDelay: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	exp := time.Now().Add(time.Hour).UTC()
	x, y, z := []byte(`{"a":"x"}`), []byte(`{"a":"y"}`), []byte(`{"a":"z"}`)
	var ops []ledgerOp
	reserve := func(id, key string, opt []byte, amount int64) {
		tk := store.Ticket{ID: id, Key: key, Option: opt, ReservationID: "res_" + id, Budget: "agent", Day: logDay,
			AmountMicros: amount, ExpiresAt: exp.Add(time.Duration(len(ops)) * time.Second)}
		ops = append(ops, ledgerOp{Seq: uint64(len(ops) + 1), Kind: opReserve, Budget: "agent", Day: logDay,
			ID: tk.ReservationID, Amount: amount, ticket: &tk})
	}
	reserve("t1", "k", x, 10)
	reserve("t2", "k", y, 11)
	reserve("t3", "k", x, 12)
	// t1-t3 reach the file through the ledger as the proxy's would (their records are then written again below).
	for _, op := range ops {
		tk := *op.ticket
		tk.ReservationID = ""
		if _, err := s.reserve(ctx, "agent", logDay, op.ID, op.Amount, 1<<40, &tk); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	reserve("t4", "k", y, 13)
	reserve("t5", "k2", nil, 14)
	reserve("t6", "k2", z, 15)
	for range 2 { // replayed twice
		writeJournal(t, path, 0, nil, ops...)
		s = openLog(t, path)
		if st, err := s.State(ctx, "agent", logDay); err != nil || st.Reserved != 10+11+12+13+14+15 {
			t.Fatalf("State after the replay = %+v, %v; want each reservation once", st, err)
		}
		s.Close()
	}
	s = openLog(t, path)
	defer s.Close()
	for _, want := range []struct {
		key, id string
		opt     []byte
	}{{"k", "t4", y}, {"k", "t3", x}, {"k", "t2", y}, {"k", "t1", x}, {"k2", "t6", z}, {"k2", "t5", nil}} {
		got, err := s.TakeTicket(ctx, want.key, time.Now())
		if err != nil || got.ID != want.id || string(got.Option) != string(want.opt) {
			t.Fatalf("took %+v (option %s), %v; want %s with option %s", got, got.Option, err, want.id, want.opt)
		}
	}
	for _, key := range []string{"k", "k2"} {
		if got, err := s.TakeTicket(ctx, key, time.Now()); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("a ticket of %s left after the replays: %+v, %v", key, got, err)
		}
	}
}

// Many reservations of budgets and days of different lengths in one commit (with and without tickets): the
// applier builds each reservation's record (amount, state, day+budget) in the buffer it reuses for the next
// operation's keys, and bbolt keeps a Put's value slice until the commit, so a record not copied out would
// be written over by the operations after it. After a restart, each reservation must settle against its own
// budget with its own amount: the budgets' figures come out exact only if every record is intact.
func TestOneBatchManyReservationsKeepTheirRecords(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.db")
	s, err := Open(path, Options{CommitDelay: time.Hour}) // one batch, written at Close
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	type res struct {
		budget, day, id string
		amount, settled int64
	}
	budgets := []string{"a", "agent-with-a-much-longer-budget-name", "bb", "agent"}
	days := []string{logDay, time.Now().UTC().Format("2006-01-02"), logDay} // days the purge at Open keeps
	var all []res
	exp := time.Now().Add(time.Hour)
	for i := 0; i < 60; i++ {
		r := res{budget: budgets[i%len(budgets)], day: days[i%len(days)], amount: int64(1000 + 7*i), settled: int64(3 * i)}
		if i%2 == 0 {
			tk, err := s.ReserveTicket(ctx, r.budget, r.day, r.amount, 1<<40,
				store.Ticket{ID: fmt.Sprintf("t%03d", i), Key: fmt.Sprintf("key-%d", i%5), Option: []byte(fmt.Sprintf(`{"i":%d}`, i)), ExpiresAt: exp})
			if err != nil {
				t.Fatal(err)
			}
			r.id = tk.ReservationID
		} else if r.id, err = s.Reserve(ctx, r.budget, r.day, r.amount, 1<<40); err != nil {
			t.Fatal(err)
		}
		all = append(all, r)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if s, err = Open(path, Options{}); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	want := map[[2]string]store.BudgetState{}
	for _, r := range all {
		if err := s.Settle(ctx, r.budget, r.day, r.id, r.settled); err != nil {
			t.Fatalf("settle %+v: %v", r, err)
		}
		w := want[[2]string{r.budget, r.day}]
		w.Spent += r.settled
		want[[2]string{r.budget, r.day}] = w
	}
	for k, w := range want {
		st, err := s.State(ctx, k[0], k[1])
		if err != nil || st.Spent != w.Spent || st.Reserved != 0 {
			t.Fatalf("%v: state %+v, %v; want spent %d and nothing reserved", k, st, err, w.Spent)
		}
	}
}
