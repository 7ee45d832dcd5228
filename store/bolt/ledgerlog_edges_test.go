package bolt

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/payguard/payguard/internal/testutil"
	"github.com/payguard/payguard/store"
)

// State reads the queued figures under the ledger's lock (it read them after releasing it: a data race,
// and spent and reserved from two different moments). Under -race this fails if that comes back; in any
// mode, what State reports never goes down while reservations are only added.
func TestStateWhileReservationsAreQueued(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "p.db"), Options{CommitDelay: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		for range 2000 {
			if _, err := s.ReserveTicket(ctx, "agent", logDay, 1, 1<<40, store.Ticket{Key: "k", ExpiresAt: time.Now().Add(time.Hour)}); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	go func() {
		defer wg.Done()
		last := int64(0)
		for range 2000 {
			st, err := s.State(ctx, "agent", logDay)
			if err != nil {
				t.Error(err)
				return
			}
			if st.Reserved < last || st.Spent != 0 {
				t.Errorf("State went from reserved %d to %+v", last, st)
				return
			}
			last = st.Reserved
		}
	}()
	wg.Wait()
}

// The ticket expiry index stores a ticket's place as (per-key bucket sequence, key). TakeTicket deletes the
// per-key bucket once it is empty, so the next ticket with the same key gets a new bucket whose sequence
// starts again at 1: the old ticket's index entry then points at the new ticket's place. The sweep must
// leave the new, live ticket there (it deleted it: the agent's paid retry found no ticket).
func TestSweepKeepsANewerTicketInAReusedPlace(t *testing.T) {
	clock := testutil.NewClock(time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC))
	s, err := Open(filepath.Join(t.TempDir(), "p.db"), Options{Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	const key = "GET https://seller.example/a"
	a, err := s.ReserveTicket(ctx, "agent", logDay, 1, 100, store.Ticket{ID: "A", Key: key, ExpiresAt: clock.Now().Add(time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := s.TakeTicket(ctx, key, clock.Now()); err != nil || got.ID != a.ID {
		t.Fatalf("TakeTicket A = %+v, %v", got, err)
	}
	b, err := s.ReserveTicket(ctx, "agent", logDay, 1, 100, store.Ticket{ID: "B", Key: key, ExpiresAt: clock.Now().Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.flush(ctx); err != nil { // B in the file
		t.Fatal(err)
	}
	// A has expired, B has 58 minutes to go. Any write transaction runs the sweep.
	clock.Advance(2 * time.Minute)
	if err := s.MarkPaymentSeen(ctx, "sha256:bb", time.Hour); err != nil {
		t.Fatal(err)
	}
	got, err := s.TakeTicket(ctx, key, clock.Now())
	if err != nil || got.ID != b.ID {
		t.Fatalf("TakeTicket of the live ticket B (expires in 58m) after the sweep = %+v, %v; want B", got, err)
	}
}

// The replay stops at a record over maxJournalRecord (1 MiB) as if it were torn, so such a record must never
// be written: a ticket that would make one is refused (ErrInvalid) and nothing is queued, and the calls
// before and after it survive a kill -9 before their commit.
func TestOversizedTicketIsRefusedAndHidesNothingFromReplay(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "p.db")
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// No Close: the applier is stuck behind the held writer lock, as a killed process would be.
	HoldWriter(s)
	ctx := context.Background()
	far := time.Now().Add(time.Hour)
	big := []byte(`"` + strings.Repeat("x", 1100<<10) + `"`) // > 1 MiB in the journal record
	for i, tk := range []store.Ticket{
		{ID: "small-1", Key: "k1", ExpiresAt: far},
		{ID: "big", Key: "k2", ExpiresAt: far, Option: big},
		{ID: "small-3", Key: "k3", ExpiresAt: far},
	} {
		_, err := s.ReserveTicket(ctx, "agent", logDay, 10, 1000, tk)
		if tk.ID == "big" {
			if !errors.Is(err, store.ErrInvalid) {
				t.Fatalf("ReserveTicket of a ticket over the journal's record limit: %v, want ErrInvalid", err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("ReserveTicket %d: %v", i, err)
		}
	}
	if st, err := s.State(ctx, "agent", logDay); err != nil || st.Reserved != 20 {
		t.Fatalf("State after the refused ticket = %+v, %v; want reserved 20", st, err)
	}
	// "kill -9": copy the file and the journals as they are now and open the copy.
	crash := filepath.Join(t.TempDir(), "p.db")
	for _, p := range []string{path, journalPath(path, 0), journalPath(path, 1)} {
		copyFile(t, p, filepath.Join(filepath.Dir(crash), filepath.Base(p)))
	}
	r, err := Open(crash, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if st, err := r.State(ctx, "agent", logDay); err != nil || st.Reserved != 20 {
		t.Errorf("after kill -9 and replay: State = %+v, %v; want reserved 20 (two ReserveTickets returned success)", st, err)
	}
	for _, k := range []string{"k1", "k3"} {
		if _, err := r.TakeTicket(ctx, k, time.Now()); err != nil {
			t.Errorf("after kill -9 and replay: ticket %s: %v", k, err)
		}
	}
	if _, err := r.TakeTicket(ctx, "k2", time.Now()); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("after kill -9 and replay: the refused ticket: %v, want ErrNotFound", err)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// A ReserveTicket that finds the queue full waits for room before it is decided, so when its ctx ends first
// it returns the ctx's error having queued nothing: no ticket a payment could later be released against
// (it did, after journaling first), and no reservation.
func TestReserveTicketThatFailsWaitingForRoomQueuesNothing(t *testing.T) {
	s := openLog(t, filepath.Join(t.TempDir(), "p.db"))
	defer s.Close()
	ctx := context.Background()
	release := holdCommits(t, s)
	defer release()
	fillQueue(t, s, store.Ticket{Key: "filler", ExpiresAt: time.Now().Add(time.Hour)})
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	_, err := s.ReserveTicket(short, "agent", logDay, 1, 1<<40, store.Ticket{ID: "failed", Key: "victim", ExpiresAt: time.Now().Add(time.Hour)})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("ReserveTicket with a full queue and a short ctx: %v; the test needs it to fail", err)
	}
	release()
	if got, err := s.TakeTicket(ctx, "victim", time.Now()); err == nil {
		t.Errorf("ReserveTicket returned %v, yet TakeTicket released its ticket %+v", context.DeadlineExceeded, got)
	}
	if st, err := s.State(ctx, "agent", logDay); err != nil || st.Reserved != maxQueued+1 {
		t.Errorf("State = %+v, %v; want reserved %d (the fillers only)", st, err, maxQueued+1)
	}
}

// Two Closes at once: both wait until the queued operations are in the file, and the second does not close
// the file under the first one's last commit.
func TestConcurrentCloseKeepsQueuedOperations(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.db")
	s, err := Open(path, Options{CommitDelay: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for range 50 {
		if _, err := s.ReserveTicket(ctx, "agent", logDay, 1, 1<<40, store.Ticket{Key: "k", ExpiresAt: time.Now().Add(time.Hour)}); err != nil {
			t.Fatal(err)
		}
	}
	errs := make(chan error, 2)
	for range 2 {
		go func() { errs <- s.Close() }()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatalf("Close: %v", err)
		}
	}
	for i := range 2 {
		if fi, err := os.Stat(journalPath(path, i)); err != nil || fi.Size() != 0 {
			t.Fatalf("journal %d after Close: %v, %v; want empty (everything committed)", i, fi, err)
		}
	}
	r := openLog(t, path)
	defer r.Close()
	if st, err := r.State(ctx, "agent", logDay); err != nil || st.Reserved != 50 {
		t.Fatalf("State after reopening = %+v, %v; want reserved 50", st, err)
	}
}
