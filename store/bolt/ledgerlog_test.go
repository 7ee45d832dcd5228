package bolt

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/payguard/payguard/internal/testutil"
	"github.com/payguard/payguard/store"
)

const logDay = "2026-11-23"

func openLog(t *testing.T, path string) *Store {
	t.Helper()
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// ReserveTicket does not wait for the file, yet its reservation counts at once, and its ticket cannot be
// taken (its payment released) before the reservation is committed.
func TestReserveTicketCountsAtOnceAndIsTakenOnlyWhenDurable(t *testing.T) {
	s := openLog(t, filepath.Join(t.TempDir(), "p.db"))
	defer s.Close()
	ctx := context.Background()
	release := holdCommits(t, s) // the applier waits before each commit
	defer release()

	tk, err := s.ReserveTicket(ctx, "agent", logDay, 70, 100, store.Ticket{Key: "k", ExpiresAt: time.Now().Add(time.Hour)})
	if err != nil {
		t.Fatalf("ReserveTicket while no commit can run: %v", err)
	}
	if st, err := s.State(ctx, "agent", logDay); err != nil || st.Reserved != 70 {
		t.Fatalf("State with the reservation queued = %+v, %v; want reserved 70", st, err)
	}
	if _, err := s.ReserveTicket(ctx, "agent", logDay, 31, 100, store.Ticket{Key: "k2", ExpiresAt: time.Now().Add(time.Hour)}); !errors.Is(err, store.ErrBudgetExceeded) {
		t.Fatalf("ReserveTicket over the cap with the first one queued: %v, want ErrBudgetExceeded", err)
	}
	if _, err := s.ReserveTicket(ctx, "agent", logDay, 1, 100, store.Ticket{ID: tk.ID, Key: "k3", ExpiresAt: time.Now().Add(time.Hour)}); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("ReserveTicket reusing a queued ticket's id: %v, want ErrConflict", err)
	}
	// TakeTicket waits for the commit: with commits held, it can only end by its context's deadline (one that
	// did not wait would answer at once, with the ticket or ErrNotFound, whatever the machine's speed).
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	got, err := s.TakeTicket(short, "k", time.Now())
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("TakeTicket before the reservation was committed = %+v, %v; want it to wait (deadline exceeded)", got, err)
	}
	release()
	got, err = s.TakeTicket(ctx, "k", time.Now())
	if err != nil || got.ID != tk.ID || got.ReservationID != tk.ReservationID {
		t.Fatalf("TakeTicket after the commit = %+v, %v; want %+v", got, err, tk)
	}
	// Now in the file itself.
	err = s.db.View(func(tx *bbolt.Tx) error {
		if tx.Bucket(bucketReservations).Get([]byte(logDay+tk.ReservationID)) == nil {
			return errors.New("reservation not in the file")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(ctx, "agent", logDay, tk.ReservationID); err != nil {
		t.Fatal(err)
	}
	if st, err := s.State(ctx, "agent", logDay); err != nil || st.Spent != 70 || st.Reserved != 0 {
		t.Fatalf("State after Commit = %+v, %v; want spent 70", st, err)
	}
}

// writeJournal writes framed records of ops in the binary form (and then tail, raw bytes) to journal i of
// the store at path.
func writeJournal(t *testing.T, path string, i int, tail []byte, ops ...ledgerOp) {
	t.Helper()
	var data []byte
	var enc recordEncoder
	for _, op := range ops {
		rec, err := enc.record(&op)
		if err != nil {
			t.Fatal(err)
		}
		data = append(data, rec...)
	}
	if err := os.WriteFile(journalPath(path, i), append(data, tail...), 0o600); err != nil {
		t.Fatal(err)
	}
}

// writeJSONJournal writes framed records of ops in the JSON form of journals written before the binary one
// (a journal left by an older payguard).
func writeJSONJournal(t *testing.T, path string, i int, tail []byte, ops ...jsonRecord) {
	t.Helper()
	var data []byte
	for _, op := range ops {
		payload, err := json.Marshal(op)
		if err != nil {
			t.Fatal(err)
		}
		data = append(data, frame(payload)...)
	}
	if err := os.WriteFile(journalPath(path, i), append(data, tail...), 0o600); err != nil {
		t.Fatal(err)
	}
}

// Open replays the journals in sequence order across both files, skips what the file already has, stops at
// a torn or damaged record, and leaves the journals empty: journals of the binary form, of the JSON form an
// older payguard wrote (killed, then upgraded), and one of each.
func TestJournalReplay(t *testing.T) {
	for _, form := range []string{"binary", "json", "mixed"} {
		t.Run(form, func(t *testing.T) { testJournalReplay(t, form) })
	}
}

func testJournalReplay(t *testing.T, form string) {
	path := filepath.Join(t.TempDir(), "p.db")
	ctx := context.Background()
	s := openLog(t, path)
	applied, err := s.Reserve(ctx, "agent", logDay, 5, 100) // in the file already
	if err != nil {
		t.Fatal(err)
	}
	s.Close()

	exp := time.Now().Add(time.Hour).UTC()
	tk := store.Ticket{ID: "tkt_r", Key: "replayed", Option: []byte(`{"scheme":"exact"}`), ReservationID: "r1", ReceiptID: "rcpt_1",
		Budget: "agent", Day: logDay, AmountMicros: 20, ExpiresAt: exp}
	tv, _ := json.Marshal(tk)
	ops := []ledgerOp{
		{Seq: 1, Kind: opReserve, Budget: "agent", Day: logDay, ID: applied, Amount: 5},
		{Seq: 2, Kind: opReserve, Budget: "agent", Day: logDay, ID: "r1", Amount: 20, ticket: &tk},
		{Seq: 3, Kind: opCommit, Budget: "agent", Day: logDay, ID: "r1"},
		{Seq: 4, Kind: opReserve, Budget: "agent", Day: logDay, ID: "r2", Amount: 30},
	}
	asJSON := func(op ledgerOp) jsonRecord {
		j := jsonRecord{Seq: op.Seq, Kind: op.Kind, Budget: op.Budget, Day: op.Day, ID: op.ID, Amount: op.Amount}
		if op.ticket != nil {
			j.Ticket = tv
		}
		return j
	}
	var good []byte
	if form == "binary" {
		var enc recordEncoder
		rec, _ := enc.record(&ledgerOp{Seq: 9, Kind: opReserve, Budget: "agent", Day: logDay, ID: "r9", Amount: 1000})
		good = append(good, rec...)
	} else {
		good = frame([]byte(`{"seq":9,"kind":"reserve","budget":"agent","day":"` + logDay + `","id":"r9","amount":1000}`))
	}
	damaged := append([]byte(nil), good...)
	damaged[len(damaged)-3] ^= 0xff // payload changed under its CRC
	// Journal 1 holds the older records: the replay must order by sequence, not by file.
	switch form {
	case "binary":
		writeJournal(t, path, 1, nil, ops[0], ops[1])
		writeJournal(t, path, 0, damaged, ops[2], ops[3])
	case "json":
		writeJSONJournal(t, path, 1, nil, asJSON(ops[0]), asJSON(ops[1]))
		writeJSONJournal(t, path, 0, damaged, asJSON(ops[2]), asJSON(ops[3]))
	case "mixed":
		writeJSONJournal(t, path, 1, nil, asJSON(ops[0]), asJSON(ops[1]))
		writeJournal(t, path, 0, damaged, ops[2], ops[3])
	}

	s = openLog(t, path)
	defer s.Close()
	// 5 (once, not twice) + 20 committed + 30; the damaged record's 1000 is not there.
	if st, err := s.State(ctx, "agent", logDay); err != nil || st.Spent != 20 || st.Reserved != 35 {
		t.Fatalf("State after the replay = %+v, %v; want spent 20, reserved 35", st, err)
	}
	got, err := s.TakeTicket(ctx, "replayed", time.Now())
	want := tk
	want.Used = true
	if err != nil || got.ID != want.ID || got.Key != want.Key || string(got.Option) != string(want.Option) ||
		got.ReservationID != want.ReservationID || got.ReceiptID != want.ReceiptID || got.Budget != want.Budget ||
		got.Day != want.Day || got.AmountMicros != want.AmountMicros || !got.ExpiresAt.Equal(want.ExpiresAt) || !got.Used {
		t.Fatalf("replayed ticket = %+v, %v; want %+v", got, err, want)
	}
	for i := range 2 {
		if fi, err := os.Stat(journalPath(path, i)); err != nil || fi.Size() != 0 {
			t.Fatalf("journal %d after the replay: %v, %v; want empty", i, fi, err)
		}
	}
	// A half-written record alone (the usual torn tail) is ignored too.
	s.Close()
	if err := os.WriteFile(journalPath(path, 0), good[:len(good)-4], 0o600); err != nil {
		t.Fatal(err)
	}
	s = openLog(t, path)
	if st, err := s.State(ctx, "agent", logDay); err != nil || st.Reserved != 35 {
		t.Fatalf("State after replaying a torn record = %+v, %v; want reserved 35", st, err)
	}
}

// A record of an operation this version does not know stops Open with a clear error instead of being
// dropped: in the JSON form, a kind it does not know; in the binary form, a kind code it does not know, or
// a form byte it does not know (both whole records under a good CRC).
func TestJournalUnknownOperation(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.db")
	openLog(t, path).Close()
	writeJSONJournal(t, path, 0, nil, jsonRecord{Seq: 1, Kind: "refund", Budget: "agent", Day: logDay, ID: "x"})
	if _, err := Open(path, Options{}); err == nil || !strings.Contains(err.Error(), `unknown operation "refund"`) {
		t.Fatalf("Open with an unknown journal operation: %v", err)
	}
	var enc recordEncoder
	rec, err := enc.record(&ledgerOp{Seq: 1, Kind: opCommit, Budget: "agent", Day: logDay, ID: "x"})
	if err != nil {
		t.Fatal(err)
	}
	payload := append([]byte(nil), rec[8:]...)
	payload[1] = 99 // a kind code from a newer version
	if err := os.WriteFile(journalPath(path, 0), frame(payload), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(path, Options{}); err == nil || !strings.Contains(err.Error(), `unknown operation "code 99"`) {
		t.Fatalf("Open with an unknown kind code: %v", err)
	}
	payload[0] = 0x02 // a record form from a newer version
	if err := os.WriteFile(journalPath(path, 0), frame(payload), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(path, Options{}); err == nil || !strings.Contains(err.Error(), "form this version does not know") {
		t.Fatalf("Open with an unknown record form: %v", err)
	}
	if _, err := enc.record(&ledgerOp{Seq: 1, Kind: "refund"}); err == nil {
		t.Fatal("an operation of an unknown kind was encoded")
	}
}

// When a commit fails, the ledger stops taking operations (fail closed) and the journal keeps what it
// could not write; a restart replays it.
func TestLedgerStopsWhenACommitFails(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.db")
	ctx := context.Background()
	s := openLog(t, path)
	boom := errors.New("disk on fire")
	s.log.mu.Lock()
	s.log.failApply = boom
	s.log.mu.Unlock()

	tk, err := s.ReserveTicket(ctx, "agent", logDay, 40, 100, store.Ticket{Key: "k", ExpiresAt: time.Now().Add(time.Hour)})
	if err != nil {
		t.Fatalf("ReserveTicket (journaled before the commit fails): %v", err)
	}
	if _, err := s.TakeTicket(ctx, "k", time.Now()); !errors.Is(err, boom) {
		t.Fatalf("TakeTicket after the failed commit: %v, want the commit's error (not a released payment)", err)
	}
	if _, err := s.Reserve(ctx, "agent", logDay, 1, 100); !errors.Is(err, boom) {
		t.Fatalf("Reserve on a stopped ledger: %v, want the commit's error", err)
	}
	if _, err := s.ReserveTicket(ctx, "agent", logDay, 1, 100, store.Ticket{Key: "k2", ExpiresAt: time.Now().Add(time.Hour)}); !errors.Is(err, boom) {
		t.Fatalf("ReserveTicket on a stopped ledger: %v, want the commit's error", err)
	}
	if err := s.Commit(ctx, "agent", logDay, tk.ReservationID); !errors.Is(err, boom) {
		t.Fatalf("Commit on a stopped ledger: %v, want the commit's error", err)
	}
	if _, err := s.State(ctx, "agent", logDay); !errors.Is(err, boom) {
		t.Fatalf("State on a stopped ledger: %v, want the commit's error (so /readyz and decisions see it)", err)
	}
	s.Close()

	s = openLog(t, path)
	defer s.Close()
	if st, err := s.State(ctx, "agent", logDay); err != nil || st.Reserved != 40 {
		t.Fatalf("State after the restart = %+v, %v; want reserved 40 (replayed)", st, err)
	}
	if got, err := s.TakeTicket(ctx, "k", time.Now()); err != nil || got.ID != tk.ID {
		t.Fatalf("ticket after the restart = %+v, %v", got, err)
	}
}

// holdCommits makes the applier wait before each commit until the returned function is called (safe to
// call more than once). Callers defer it after deferring the store's Close, which waits for the applier.
func holdCommits(t *testing.T, s *Store) (release func()) {
	t.Helper()
	gate := make(chan struct{})
	s.log.mu.Lock()
	s.log.applyGate = gate
	s.log.mu.Unlock()
	var once sync.Once
	release = func() {
		once.Do(func() {
			s.log.mu.Lock()
			s.log.applyGate = nil
			s.log.mu.Unlock()
			close(gate)
		})
	}
	return release
}

// fillQueue, with commits held (holdCommits), lets the applier take one ReserveTicket of tk and wait with
// it, then queues maxQueued more: the queue is full.
func fillQueue(t *testing.T, s *Store, tk store.Ticket) {
	t.Helper()
	ctx := context.Background()
	if _, err := s.ReserveTicket(ctx, "agent", logDay, 1, 1<<40, tk); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 10*time.Second, func() bool {
		s.log.mu.Lock()
		defer s.log.mu.Unlock()
		return len(s.log.queue) == 0
	}, "the applier took the queued batch")
	for range maxQueued {
		if _, err := s.ReserveTicket(ctx, "agent", logDay, 1, 1<<40, tk); err != nil {
			t.Fatal(err)
		}
	}
}

// With maxQueued operations waiting for a commit, a ReserveTicket waits for room: a slow disk holds the
// decisions back instead of the queue growing without bound.
func TestReserveTicketWaitsWhenTheQueueIsFull(t *testing.T) {
	s := openLog(t, filepath.Join(t.TempDir(), "p.db"))
	defer s.Close()
	ctx := context.Background()
	release := holdCommits(t, s)
	defer release()
	tk := store.Ticket{Key: "k", ExpiresAt: time.Now().Add(time.Hour)}
	fillQueue(t, s, tk)
	// With the queue full and commits held, ReserveTicket waits for room before it decides: it ends only by
	// its context's deadline, and then has queued nothing (one that did not wait would have queued it).
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	_, err := s.ReserveTicket(short, "agent", logDay, 1, 1<<40, tk)
	cancel()
	s.log.mu.Lock()
	queued := len(s.log.queue)
	s.log.mu.Unlock()
	if !errors.Is(err, context.DeadlineExceeded) || queued != maxQueued {
		t.Fatalf("ReserveTicket with %d operations queued = %v with %d queued; want it to wait for room (deadline exceeded), nothing queued", maxQueued, err, queued)
	}
	release()
	if _, err := s.ReserveTicket(ctx, "agent", logDay, 1, 1<<40, tk); err != nil {
		t.Fatal(err)
	}
	if st, err := s.State(ctx, "agent", logDay); err != nil || st.Reserved != maxQueued+2 {
		t.Fatalf("State = %+v, %v; want reserved %d", st, err, maxQueued+2)
	}
}

// A journal record reads back as the operation it was written from, ticket included, whatever the record
// before it left in the encoder's buffer; a record cut anywhere, or with a field's length past its end, reads
// as nothing (a torn tail).
func TestJournalRecordRoundTrip(t *testing.T) {
	tk := store.Ticket{ID: "tkt_1", Key: "GET https://seller.example/a \"q\"", Option: []byte(`{"a":1}`), ReservationID: "r1",
		ReceiptID: "rcpt", HoldID: "hold", Budget: "agent \"x\"", Day: logDay, AmountMicros: 5, ExpiresAt: time.Unix(1, 7).UTC()}
	for _, op := range []*ledgerOp{
		{Seq: 7, Kind: opReserve, Budget: "agent \"x\"", Day: logDay, ID: "r1", Amount: 5, ticket: &tk},
		{Seq: 8, Kind: opCommit, Budget: "agent", Day: logDay, ID: "r1"},
		{Seq: 9, Kind: opSettle, Budget: "agent", Day: logDay, ID: "r1", Amount: 0},
		{Seq: 1 << 40, Kind: opTrial, Day: logDay, ID: "10.0.0.1", Amount: 3, Expires: -5},
	} {
		var enc recordEncoder
		if _, err := enc.record(&ledgerOp{Seq: 1, Kind: opCommit, Budget: "a much longer budget name that grows the buffer", Day: logDay, ID: "r0",
			ticket: &store.Ticket{ID: "long", Key: strings.Repeat("k", 300), Option: bytes.Repeat([]byte("o"), 500)}}); err != nil {
			t.Fatal(err) // a longer record first: the buffer it leaves must not show through
		}
		rec, err := enc.record(op)
		if err != nil {
			t.Fatal(err)
		}
		payload := rec[8:]
		if !bytes.Equal(rec, frame(payload)) {
			t.Fatalf("record %q is not its payload framed", rec)
		}
		got := readJournal(rec)
		if len(got) != 1 {
			t.Fatalf("record %q read back as %d operations", payload, len(got))
		}
		g := got[0]
		if g.Seq != op.Seq || g.Kind != op.Kind || g.Budget != op.Budget || g.Day != op.Day || g.ID != op.ID ||
			g.Amount != op.Amount || g.Expires != op.Expires || g.bad != nil || (g.ticket == nil) != (op.ticket == nil) {
			t.Fatalf("record %q read back as %+v, want %+v", payload, g, op)
		}
		if op.ticket != nil {
			if gt, wt := *g.ticket, *op.ticket; gt.ID != wt.ID || gt.Key != wt.Key || string(gt.Option) != string(wt.Option) ||
				gt.ReservationID != wt.ReservationID || gt.ReceiptID != wt.ReceiptID || gt.HoldID != wt.HoldID ||
				gt.Budget != wt.Budget || gt.Day != wt.Day || gt.AmountMicros != wt.AmountMicros || !gt.ExpiresAt.Equal(wt.ExpiresAt) {
				t.Fatalf("ticket read back as %+v, want %+v", gt, wt)
			}
		}
		// Cut short under a CRC that matches what is left: malformed, not an operation.
		for n := 0; n < len(payload); n++ {
			if op.ticket != nil && n >= len(payload)-len(op.ticket.Option) {
				break // a cut inside the option leaves a shorter option, which the CRC alone guards
			}
			if ops := readJournal(frame(payload[:n])); len(ops) != 0 && ops[0].bad == nil {
				t.Fatalf("the record cut to %d bytes read back as %+v", n, ops[0])
			}
		}
	}
}

// frame is a journal record of payload, written out the slow way.
func frame(payload []byte) []byte {
	rec := binary.BigEndian.AppendUint32(nil, uint32(len(payload)))
	rec = binary.BigEndian.AppendUint32(rec, crc32.Checksum(payload, castagnoli))
	return append(rec, payload...)
}

// A journaled settle (an upto payment's usage) replays as what was settled: the settled amount spent, the
// rest of the reservation released; a record whose amount is out of range commits the whole reservation.
func TestJournalReplaysSettle(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.db")
	ctx := context.Background()
	openLog(t, path).Close()
	writeJournal(t, path, 0, nil,
		ledgerOp{Seq: 1, Kind: opReserve, Budget: "agent", Day: logDay, ID: "u1", Amount: 200},
		ledgerOp{Seq: 2, Kind: opReserve, Budget: "agent", Day: logDay, ID: "u2", Amount: 100},
		ledgerOp{Seq: 3, Kind: opSettle, Budget: "agent", Day: logDay, ID: "u1", Amount: 70},
		ledgerOp{Seq: 4, Kind: opSettle, Budget: "agent", Day: logDay, ID: "u2", Amount: 101},
		ledgerOp{Seq: 5, Kind: opSettle, Budget: "agent", Day: logDay, ID: "u1", Amount: 0}) // settled already: no-op
	s := openLog(t, path)
	defer s.Close()
	if st, err := s.State(ctx, "agent", logDay); err != nil || st.Spent != 170 || st.Reserved != 0 {
		t.Fatalf("State after the replay = %+v, %v; want spent 170 (70 settled + 100 whole), reserved 0", st, err)
	}
}

// A ticket id is refused while its ticket is queued or in the file, whichever side of maxTicketID (the id
// above which no read is made) it falls: the highest id in the file after a restart, an id below it in the
// file, an id below it still queued, and one just applied.
func TestTicketIDConflictsAroundTheFastPath(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.db")
	ctx := context.Background()
	s := openLog(t, path)
	far := time.Now().Add(time.Hour)
	for _, id := range []string{"tkt_b", "tkt_d"} {
		if _, err := s.ReserveTicket(ctx, "agent", logDay, 1, 100, store.Ticket{ID: id, Key: "k-" + id, ExpiresAt: far}); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	s = openLog(t, path)
	defer s.Close()
	conflict := func(id string) {
		t.Helper()
		if _, err := s.ReserveTicket(ctx, "agent", logDay, 1, 100, store.Ticket{ID: id, Key: "other", ExpiresAt: far}); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("ReserveTicket with the id %s held: %v, want ErrConflict", id, err)
		}
	}
	conflict("tkt_d") // the file's highest id, read at Open
	conflict("tkt_b") // below it, in the file
	release := holdCommits(t, s)
	defer release() // before Close, should a check fail
	if _, err := s.ReserveTicket(ctx, "agent", logDay, 1, 100, store.Ticket{ID: "tkt_c", Key: "k-c", ExpiresAt: far}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ReserveTicket(ctx, "agent", logDay, 1, 100, store.Ticket{ID: "tkt_z", Key: "k-z", ExpiresAt: far}); err != nil {
		t.Fatal(err)
	}
	conflict("tkt_c") // queued, below the highest
	conflict("tkt_z") // queued, the highest
	release()
	if err := s.flush(ctx); err != nil {
		t.Fatal(err)
	}
	conflict("tkt_z") // applied: in the file now
	if _, err := s.ReserveTicket(ctx, "agent", logDay, 1, 100, store.Ticket{ID: "tkt_a", Key: "k-a", ExpiresAt: far}); err != nil {
		t.Fatalf("a free id below the highest: %v", err)
	}
}

// A caller waiting for its operation's commit (Reserve, TakeTicket's flush) is woken by each commit and
// returns only at the one that holds its operation: here the operation is queued while an earlier batch is
// being committed, so the first wake-up is not its own, and it must still return once its batch is written,
// without waiting for a commit delay of an hour.
func TestWaitSpansTheCommitBeforeIt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.db")
	s, err := Open(path, Options{CommitDelay: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	release := holdCommits(t, s)
	defer release()
	if _, err := s.ReserveTicket(ctx, "agent", logDay, 1, 100, store.Ticket{Key: "first", ExpiresAt: time.Now().Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	s.hurry() // the applier takes the first batch at once and waits at the gate with it
	testutil.Eventually(t, 10*time.Second, func() bool {
		s.log.mu.Lock()
		defer s.log.mu.Unlock()
		return len(s.log.queue) == 0
	}, "the applier took the first batch")
	done := make(chan error, 1)
	go func() { _, err := s.Reserve(ctx, "agent", logDay, 2, 100); done <- err }()
	testutil.Eventually(t, 10*time.Second, func() bool {
		s.log.mu.Lock()
		defer s.log.mu.Unlock()
		return len(s.log.queue) == 1
	}, "the Reserve is queued behind the batch being committed")
	release()
	if err := <-done; err != nil {
		t.Fatalf("Reserve: %v", err)
	}
	var reserved int64
	s.db.View(func(tx *bbolt.Tx) error {
		_, reserved = readBudget(tx.Bucket(bucketBudgets), budgetKey("agent", logDay))
		return nil
	})
	if reserved != 3 {
		t.Fatalf("the file's reserved after Reserve returned = %d, want 3 (both operations committed)", reserved)
	}
}
