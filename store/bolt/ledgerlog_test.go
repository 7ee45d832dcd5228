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

// writeJournal writes framed records of ops (and then tail, raw bytes) to journal i of the store at path.
func writeJournal(t *testing.T, path string, i int, tail []byte, ops ...ledgerOp) {
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
// a torn or damaged record, and leaves the journals empty.
func TestJournalReplay(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.db")
	ctx := context.Background()
	s := openLog(t, path)
	applied, err := s.Reserve(ctx, "agent", logDay, 5, 100) // in the file already
	if err != nil {
		t.Fatal(err)
	}
	s.Close()

	exp := time.Now().Add(time.Hour).UTC()
	tv, _ := json.Marshal(store.Ticket{ID: "tkt_r", Key: "replayed", ReservationID: "r1", Budget: "agent", Day: logDay, AmountMicros: 20, ExpiresAt: exp})
	good := frame([]byte(`{"seq":9,"kind":"reserve","budget":"agent","day":"` + logDay + `","id":"r9","amount":1000}`))
	damaged := append([]byte(nil), good...)
	damaged[len(damaged)-3] ^= 0xff // payload changed under its CRC
	// Journal 1 holds the older records: the replay must order by sequence, not by file.
	writeJournal(t, path, 1, nil,
		ledgerOp{Seq: 1, Kind: opReserve, Budget: "agent", Day: logDay, ID: applied, Amount: 5},
		ledgerOp{Seq: 2, Kind: opReserve, Budget: "agent", Day: logDay, ID: "r1", Amount: 20, Ticket: tv})
	writeJournal(t, path, 0, damaged,
		ledgerOp{Seq: 3, Kind: opCommit, Budget: "agent", Day: logDay, ID: "r1"},
		ledgerOp{Seq: 4, Kind: opReserve, Budget: "agent", Day: logDay, ID: "r2", Amount: 30})

	s = openLog(t, path)
	defer s.Close()
	// 5 (once, not twice) + 20 committed + 30; the damaged record's 1000 is not there.
	if st, err := s.State(ctx, "agent", logDay); err != nil || st.Spent != 20 || st.Reserved != 35 {
		t.Fatalf("State after the replay = %+v, %v; want spent 20, reserved 35", st, err)
	}
	if tk, err := s.TakeTicket(ctx, "replayed", time.Now()); err != nil || tk.ID != "tkt_r" {
		t.Fatalf("replayed ticket = %+v, %v", tk, err)
	}
	for i := range 2 {
		if fi, err := os.Stat(journalPath(path, i)); err != nil || fi.Size() != 0 {
			t.Fatalf("journal %d after the replay: %v, %v; want empty", i, fi, err)
		}
	}
	// A half-written record alone (the usual torn tail) is ignored too.
	s.Close()
	writeJournal(t, path, 0, good[:len(good)-4])
	s = openLog(t, path)
	if st, err := s.State(ctx, "agent", logDay); err != nil || st.Reserved != 35 {
		t.Fatalf("State after replaying a torn record = %+v, %v; want reserved 35", st, err)
	}
}

// A record of an operation this version does not know stops Open with a clear error instead of being
// dropped.
func TestJournalUnknownOperation(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.db")
	openLog(t, path).Close()
	writeJournal(t, path, 0, nil, ledgerOp{Seq: 1, Kind: "refund", Budget: "agent", Day: logDay, ID: "x"})
	if _, err := Open(path, Options{}); err == nil || !strings.Contains(err.Error(), `unknown operation "refund"`) {
		t.Fatalf("Open with an unknown journal operation: %v", err)
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

// A journal record reads back as the operation it was written from, ticket included.
func TestJournalRecordRoundTrip(t *testing.T) {
	tv, _ := json.Marshal(store.Ticket{ID: "tkt_1", Key: "GET https://seller.example/a \"q\"", Option: []byte(`{"a":1}`), ExpiresAt: time.Unix(1, 0).UTC()})
	for _, op := range []*ledgerOp{
		{Seq: 7, Kind: opReserve, Budget: "agent \"x\"", Day: logDay, ID: "r1", Amount: 5, Ticket: tv},
		{Seq: 8, Kind: opCommit, Budget: "agent", Day: logDay, ID: "r1"},
	} {
		var enc recordEncoder
		if _, err := enc.record(&ledgerOp{Seq: 1, Kind: opCommit, Budget: "a much longer budget name that grows the buffer", Day: logDay, ID: "r0"}); err != nil {
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
			t.Fatalf("record %s read back as %d operations", payload, len(got))
		}
		g := got[0]
		if g.Seq != op.Seq || g.Kind != op.Kind || g.Budget != op.Budget || g.Day != op.Day || g.ID != op.ID ||
			g.Amount != op.Amount || string(g.Ticket) != string(op.Ticket) {
			t.Fatalf("record %s read back as %+v, want %+v", payload, g, op)
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
