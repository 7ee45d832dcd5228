package bolt

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/payguard/payguard/store"
)

// A crash while the journal grows can leave its tail as zeros (the file's size written before its data: XFS,
// ext4 without data=ordered). Eight zero bytes read as a record of length 0 whose CRC-32C (of nothing) is 0:
// a "valid" empty record no payguard ever wrote. It is a torn tail, as it was for the JSON-only replay
// (review36): Open must replay the whole records before it and start, not refuse to start.
func TestJournalZeroFilledTailIsTorn(t *testing.T) {
	for _, zeros := range []int{8, 13, 4096} {
		path := filepath.Join(t.TempDir(), "p.db")
		openLog(t, path).Close()
		writeJournal(t, path, 0, make([]byte, zeros),
			ledgerOp{Seq: 1, Kind: opReserve, Budget: "agent", Day: logDay, ID: "r1", Amount: 7})
		s, err := Open(path, Options{})
		if err != nil {
			t.Fatalf("Open after a crash left %d zero bytes at the journal's tail: %v", zeros, err)
		}
		st, err := s.State(context.Background(), "agent", logDay)
		s.Close()
		if err != nil || st.Reserved != 7 {
			t.Fatalf("State after replaying a zero-filled tail = %+v, %v; want reserved 7", st, err)
		}
	}
}

// A whole record (its CRC holds) that this version cannot read as a binary record (bytes after its last
// field, a ticket flag it does not know: a newer payguard's record, after a downgrade) was written whole by
// some payguard: it is not a torn tail, and dropping it, and every record after it in its journal, would
// forget reservations and commits (the cap would no longer count them). Open stops with an error instead, as
// for an unknown kind (review36).
func TestJournalWholeRecordNotReadStopsOpen(t *testing.T) {
	var enc recordEncoder
	rec, err := enc.record(&ledgerOp{Seq: 1, Kind: opReserve, Budget: "agent", Day: logDay, ID: "r1", Amount: 7})
	if err != nil {
		t.Fatal(err)
	}
	payload := append([]byte(nil), rec[8:]...)
	for name, p := range map[string][]byte{
		"a field after the last":   append(append([]byte(nil), payload...), 0x2a),
		"an unknown ticket flag":   append(append([]byte(nil), payload[:len(payload)-1]...), 7),
		"cut inside its fields":    payload[:5],
		"a JSON record not JSON":   []byte(`{"seq":1,"kind":"reserve"`),
		"a JSON record wrong type": []byte(`{"seq":"one","kind":"reserve"}`),
	} {
		path := filepath.Join(t.TempDir(), "p.db")
		openLog(t, path).Close()
		var later []byte
		if r2, err := enc.record(&ledgerOp{Seq: 2, Kind: opReserve, Budget: "agent", Day: logDay, ID: "r2", Amount: 9}); err == nil {
			later = append(later, r2...)
		}
		if err := os.WriteFile(journalPath(path, 0), append(frame(p), later...), 0o600); err != nil {
			t.Fatal(err)
		}
		s, err := Open(path, Options{})
		if err == nil {
			st, _ := s.State(context.Background(), "agent", logDay)
			s.Close()
			t.Errorf("%s: Open replayed past a whole record it could not read (state %+v): want an error", name, st)
			continue
		}
		if !strings.Contains(err.Error(), "journal") {
			t.Errorf("%s: Open's error %q does not name the journal", name, err)
		}
	}
}

// FuzzJournalRecord: whatever an operation holds (strings of any bytes, any amounts, a ticket with any
// fields and option bytes), its binary record reads back as the same operation; and readJournal never
// panics on any bytes.
func FuzzJournalRecord(f *testing.F) {
	f.Add(uint64(1), uint8(0), "agent", "2026-11-27", "r1", int64(5), int64(0), true, "tkt_1", "key", "rcpt", "hold", []byte(`{"a":1}`), int64(1764201600), uint32(5))
	f.Add(^uint64(0), uint8(3), "", "", "", int64(-1<<63), int64(1<<63-1), false, "", "", "", "", []byte{}, int64(-1), uint32(999999999))
	f.Add(uint64(0), uint8(1), "\x00\xff{", "\n", "\"", int64(0), int64(-5), true, "\x01", "{", "", "\xc3", []byte("\x00\x01\x02"), int64(0), uint32(0))
	f.Fuzz(func(t *testing.T, seq uint64, kind uint8, budget, day, id string, amount, expires int64, withTicket bool,
		tid, key, receipt, hold string, option []byte, expSec int64, expNsec uint32) {
		kinds := []string{opReserve, opCommit, opSettle, opTrial}
		op := &ledgerOp{Seq: seq, Kind: kinds[int(kind)%len(kinds)], Budget: budget, Day: day, ID: id, Amount: amount, Expires: expires}
		if withTicket {
			op.ticket = &store.Ticket{ID: tid, Key: key, ReceiptID: receipt, HoldID: hold, ReservationID: id, Budget: budget, Day: day,
				AmountMicros: amount, Option: option, ExpiresAt: time.Unix(expSec%(1<<40), int64(expNsec%1e9)).UTC()}
		}
		var enc recordEncoder
		rec, err := enc.record(op)
		if err != nil {
			if len(rec) == 0 && len(budget)+len(day)+len(id)+len(option)+len(key) > maxJournalRecord-64 {
				return
			}
			t.Fatalf("record: %v", err)
		}
		rec = append([]byte(nil), rec...)
		ops := readJournal(append(rec, rec...))
		if len(ops) != 2 {
			t.Fatalf("readJournal of two records gave %d operations", len(ops))
		}
		for _, got := range ops {
			if got.bad != nil || got.Seq != op.Seq || got.Kind != op.Kind || got.Budget != op.Budget || got.Day != op.Day ||
				got.ID != op.ID || got.Amount != op.Amount || got.Expires != op.Expires || (got.ticket != nil) != withTicket {
				t.Fatalf("record read back as %+v (bad %v), want %+v", got, got.bad, op)
			}
			if withTicket {
				g, w := got.ticket, op.ticket
				if g.ID != w.ID || g.Key != w.Key || g.ReceiptID != w.ReceiptID || g.HoldID != w.HoldID || g.ReservationID != w.ReservationID ||
					g.Budget != w.Budget || g.Day != w.Day || g.AmountMicros != w.AmountMicros || !bytes.Equal(g.Option, w.Option) ||
					!g.ExpiresAt.Equal(w.ExpiresAt) {
					t.Fatalf("ticket read back as %+v, want %+v", g, w)
				}
			}
		}
		// Any bytes: no panic, and a cut record is never read as a whole one.
		for i := 0; i < len(rec); i++ {
			if ops := readJournal(rec[:i]); len(ops) != 0 {
				t.Fatalf("a record cut at %d of %d bytes was read: %+v", i, len(rec), ops[0])
			}
		}
		readJournal(option)
	})
}
