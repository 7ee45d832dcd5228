package bolt_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/payguard/payguard/store"
	"github.com/payguard/payguard/store/bolt"
)

// childEnv makes the re-executed test binary act as a payguard process that writes state and then waits to
// be killed.
const childEnv = "PAYGUARD_BOLT_CRASH_CHILD"

const crashDay = "2026-11-22"

func TestMain(m *testing.M) {
	if path := os.Getenv(journalChildEnv); path != "" {
		if err := journalChild(path); err != nil {
			fmt.Fprintln(os.Stderr, "journal crash child:", err)
			os.Exit(3)
		}
		time.Sleep(time.Hour)
		os.Exit(4)
	}
	if path := os.Getenv(capEdgeChildEnv); path != "" {
		if err := capEdgeChild(path); err != nil {
			fmt.Fprintln(os.Stderr, "cap edge crash child:", err)
			os.Exit(3)
		}
		os.Exit(4)
	}
	if path := os.Getenv(batchChildEnv); path != "" {
		if err := batchChild(path); err != nil {
			fmt.Fprintln(os.Stderr, "batch crash child:", err)
			os.Exit(3)
		}
		os.Exit(4)
	}
	if path := os.Getenv(leaseChildEnv); path != "" {
		if err := leaseChild(path); err != nil {
			fmt.Fprintln(os.Stderr, "lease crash child:", err)
			os.Exit(3)
		}
		os.Exit(4)
	}
	if path := os.Getenv(childEnv); path != "" {
		if err := crashChild(path); err != nil {
			fmt.Fprintln(os.Stderr, "crash child:", err)
			os.Exit(3)
		}
		// Wait for SIGKILL; the file is still open and locked.
		time.Sleep(time.Hour)
		os.Exit(4)
	}
	os.Exit(m.Run())
}

// crashChild writes one of every kind of state, then reports "ready" on stdout without closing the store.
func crashChild(path string) error {
	ctx := context.Background()
	s, err := bolt.Open(path, bolt.Options{})
	if err != nil {
		return err
	}
	committed, err := s.Reserve(ctx, "agent", crashDay, 300_000, 1_000_000)
	if err != nil {
		return err
	}
	if err := s.Commit(ctx, "agent", crashDay, committed); err != nil {
		return err
	}
	far := time.Now().Add(time.Hour)
	// The proxy's write for an allowed 402: the reservation and its ticket together.
	tk := store.Ticket{ID: "t1", Key: "ticket-key", ExpiresAt: far}
	if _, err := s.ReserveTicket(ctx, "agent", crashDay, 200_000, 1_000_000, tk); err != nil {
		return err
	}
	for _, id := range []string{"held", "approved"} {
		h := store.Hold{ID: id, Key: "GET https://seller.example/" + id, AmountMicros: 500_000, CreatedAt: time.Now(), ExpiresAt: far}
		if err := s.CreateHold(ctx, h); err != nil {
			return err
		}
	}
	if _, err := s.ResolveHold(ctx, "approved", store.HoldApproved, "alice", "ok", time.Now()); err != nil {
		return err
	}
	if err := s.MarkPaymentSeen(ctx, "sha256:paid", time.Hour); err != nil {
		return err
	}
	if _, _, err := s.TakeTrial(ctx, "203.0.113.7", crashDay, 3, 48*time.Hour); err != nil {
		return err
	}
	fmt.Println("ready")
	return nil
}

// startChild runs this test binary as the child that env selects, writing to the store at path, and returns
// it with its standard output. The child is killed at the end of the test if it still runs.
func startChild(t *testing.T, env, path string) (*exec.Cmd, *bufio.Reader) {
	t.Helper()
	child := exec.Command(os.Args[0], "-test.run=^$")
	child.Env = append(os.Environ(), env+"="+path)
	child.Stderr = os.Stderr
	out, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { child.Process.Kill(); child.Wait() })
	return child, bufio.NewReader(out)
}

// killMidStream feeds the child's output lines to read until enough reports true, kills the child with
// SIGKILL, then feeds the whole lines it wrote before dying (they are successes too) and waits for it. what
// names the lines counted, for the message when the child stops before enough.
func killMidStream(t *testing.T, child *exec.Cmd, r *bufio.Reader, read func(string), enough func() bool, what func() string) {
	t.Helper()
	for !enough() {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("child stopped after %s: %v", what(), err)
		}
		read(line)
	}
	if err := child.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			break
		}
		if strings.HasSuffix(line, "\n") {
			read(line)
		}
	}
	child.Wait()
}

func TestSurvivesKill9(t *testing.T) {
	path := filepath.Join(t.TempDir(), "data", "payguard.db")
	child, out := startChild(t, childEnv, path)
	line, err := out.ReadString('\n')
	if err != nil || strings.TrimSpace(line) != "ready" {
		t.Fatalf("child did not get ready: %q, %v", line, err)
	}

	// While the child holds the file, a second payguard gets a clear error instead of hanging.
	_, err = bolt.Open(path, bolt.Options{Timeout: 100 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "locked by another payguard") {
		t.Fatalf("Open of a locked file: %v, want a 'locked by another payguard' error", err)
	}

	if err := child.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	err = child.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("child ended with %v, want killed by SIGKILL", err)
	}

	s, err := bolt.Open(path, bolt.Options{})
	if err != nil {
		t.Fatalf("reopen after kill -9: %v", err)
	}
	defer s.Close()
	ctx := context.Background()
	st, err := s.State(ctx, "agent", crashDay)
	if err != nil || st.Spent != 300_000 || st.Reserved != 200_000 {
		t.Fatalf("budget after kill -9 = %+v, %v; want spent 300000, reserved 200000", st, err)
	}
	// The kept reservation still counts against the cap.
	if _, err := s.Reserve(ctx, "agent", crashDay, 500_001, 1_000_000); !errors.Is(err, store.ErrBudgetExceeded) {
		t.Fatalf("Reserve over the cap after kill -9: %v, want ErrBudgetExceeded", err)
	}
	if h, err := s.GetHold(ctx, "held"); err != nil || h.Status != store.HoldPending {
		t.Fatalf("pending hold after kill -9 = %+v, %v", h, err)
	}
	if h, err := s.FindHold(ctx, "GET https://seller.example/approved"); err != nil || h.Status != store.HoldApproved || h.ResolvedBy != "alice" {
		t.Fatalf("approved hold after kill -9 = %+v, %v", h, err)
	}
	if _, err := s.UseHold(ctx, "approved"); err != nil {
		t.Fatalf("UseHold after kill -9: %v", err)
	}
	tk, err := s.TakeTicket(ctx, "ticket-key", time.Now())
	if err != nil || tk.ID != "t1" || tk.AmountMicros != 200_000 || tk.ReservationID == "" || tk.Budget != "agent" {
		t.Fatalf("ticket after kill -9 = %+v, %v", tk, err)
	}
	if err := s.MarkPaymentSeen(ctx, "sha256:paid", time.Hour); !errors.Is(err, store.ErrAlreadyUsed) {
		t.Fatalf("replay after kill -9: %v, want ErrAlreadyUsed", err)
	}
	if ok, used, err := s.TakeTrial(ctx, "203.0.113.7", crashDay, 3, 48*time.Hour); err != nil || !ok || used != 2 {
		t.Fatalf("trial after kill -9 = %v, %d, %v; want true, 2", ok, used, err)
	}
}

// A second Open in the same process also waits on the lock and then fails clearly; after Close it works.
func TestOpenLockedInProcess(t *testing.T) {
	path := filepath.Join(t.TempDir(), "payguard.db")
	first, err := bolt.Open(path, bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bolt.Open(path, bolt.Options{Timeout: 50 * time.Millisecond}); err == nil || !strings.Contains(err.Error(), "locked by another payguard") {
		t.Fatalf("second Open: %v", err)
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	second, err := bolt.Open(path, bolt.Options{})
	if err != nil {
		t.Fatalf("Open after Close: %v", err)
	}
	second.Close()
}

func TestOpenBadPath(t *testing.T) {
	dir := t.TempDir()
	blocker := filepath.Join(dir, "file")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := bolt.Open(filepath.Join(blocker, "payguard.db"), bolt.Options{}); err == nil {
		t.Fatal("Open under a regular file succeeded")
	}
	if _, err := bolt.Open("", bolt.Options{}); err == nil {
		t.Fatal("Open of an empty path succeeded")
	}
}

// batchChildEnv makes the re-executed test binary write from many goroutines at once (so that writes share
// batched commits) and print each write that returned success, until it is killed.
const batchChildEnv = "PAYGUARD_BOLT_BATCH_CRASH_CHILD"

const batchWorkers = 32

func batchChild(path string) error {
	ctx := context.Background()
	s, err := bolt.Open(path, bolt.Options{})
	if err != nil {
		return err
	}
	var mu sync.Mutex
	report := func(line string) {
		mu.Lock()
		defer mu.Unlock()
		os.Stdout.WriteString(line + "\n") // unbuffered: the line is out before the next write starts
	}
	errc := make(chan error, batchWorkers)
	for w := 0; w < batchWorkers; w++ {
		go func() {
			for i := 0; ; i++ {
				digest := fmt.Sprintf("sha256:w%d-%d", w, i)
				if err := s.MarkPaymentSeen(ctx, digest, time.Hour); err != nil {
					errc <- err
					return
				}
				report("seen " + digest)
				if _, err := s.Reserve(ctx, "batch", crashDay, 1, 1<<40); err != nil {
					errc <- err
					return
				}
				report("reserved")
			}
		}()
	}
	return <-errc
}

// Every write that returned success before a kill -9 is in the file afterwards, also when it shared its
// commit with others (the batched path of write).
func TestBatchedWritesSurviveKill9(t *testing.T) {
	path := filepath.Join(t.TempDir(), "payguard.db")
	child, r := startChild(t, batchChildEnv, path)
	var seen []string
	reserved := 0
	read := func(line string) {
		switch {
		case strings.HasPrefix(line, "seen "):
			seen = append(seen, strings.TrimSpace(strings.TrimPrefix(line, "seen ")))
		case strings.TrimSpace(line) == "reserved":
			reserved++
		default:
			t.Fatalf("unexpected child output %q", line)
		}
	}
	killMidStream(t, child, r, read, func() bool { return len(seen) >= 300 },
		func() string { return fmt.Sprintf("%d writes", len(seen)) })

	s, err := bolt.Open(path, bolt.Options{})
	if err != nil {
		t.Fatalf("reopen after kill -9: %v", err)
	}
	defer s.Close()
	ctx := context.Background()
	for _, d := range seen {
		if err := s.MarkPaymentSeen(ctx, d, time.Hour); !errors.Is(err, store.ErrAlreadyUsed) {
			t.Fatalf("%s was reported written before the kill but is not in the file: %v", d, err)
		}
	}
	st, err := s.State(ctx, "batch", crashDay)
	// Reservations that committed but were not printed before the kill may add up to one per worker.
	if err != nil || st.Reserved < int64(reserved) || st.Reserved > int64(reserved+batchWorkers) {
		t.Fatalf("reserved %d after kill -9 (%v); %d reservations were reported", st.Reserved, err, reserved)
	}
}

// journalChildEnv makes the re-executed test binary reserve two tickets while no commit can reach the file,
// then wait to be killed: the reservations exist only in the journal (and in the page cache).
const journalChildEnv = "PAYGUARD_BOLT_JOURNAL_CRASH_CHILD"

func journalChild(path string) error {
	ctx := context.Background()
	s, err := bolt.Open(path, bolt.Options{})
	if err != nil {
		return err
	}
	bolt.HoldWriter(s)
	far := time.Now().Add(time.Hour)
	for i, amount := range []int64{250_000, 150_000} {
		tk := store.Ticket{ID: fmt.Sprintf("j%d", i), Key: fmt.Sprintf("journal-key-%d", i), ExpiresAt: far}
		if _, err := s.ReserveTicket(ctx, "agent", crashDay, amount, 1_000_000, tk); err != nil {
			return err
		}
	}
	for range 2 { // free-trial calls go through the journal too
		if ok, _, err := s.TakeTrial(ctx, "198.51.100.4", crashDay, 3, 48*time.Hour); err != nil || !ok {
			return fmt.Errorf("TakeTrial: %v, %v", ok, err)
		}
	}
	fmt.Println("ready")
	return nil
}

// An allowed 402's reservation and ticket, and free-trial calls, survive a kill -9 that comes before they are
// committed to the file: Open replays the journal.
func TestJournaledReservationsSurviveKill9(t *testing.T) {
	path := filepath.Join(t.TempDir(), "payguard.db")
	child, out := startChild(t, journalChildEnv, path)
	line, err := out.ReadString('\n')
	if err != nil || strings.TrimSpace(line) != "ready" {
		t.Fatalf("child did not get ready: %q, %v", line, err)
	}
	if err := child.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	child.Wait()

	// The file itself does not have them: what follows is the journal's doing.
	raw, err := bbolt.Open(path, 0o600, &bbolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	err = raw.View(func(tx *bbolt.Tx) error {
		if n := tx.Bucket([]byte("reservations")).Stats().KeyN; n != 0 {
			return fmt.Errorf("%d reservations already in the file; the test needs them in the journal only", n)
		}
		if n := tx.Bucket([]byte("trial")).Stats().KeyN; n != 0 {
			return fmt.Errorf("%d trial counters already in the file; the test needs them in the journal only", n)
		}
		return nil
	})
	raw.Close()
	if err != nil {
		t.Fatal(err)
	}

	s, err := bolt.Open(path, bolt.Options{})
	if err != nil {
		t.Fatalf("reopen after kill -9: %v", err)
	}
	defer s.Close()
	ctx := context.Background()
	if st, err := s.State(ctx, "agent", crashDay); err != nil || st.Reserved != 400_000 {
		t.Fatalf("budget after kill -9 = %+v, %v; want reserved 400000", st, err)
	}
	if _, err := s.Reserve(ctx, "agent", crashDay, 600_001, 1_000_000); !errors.Is(err, store.ErrBudgetExceeded) {
		t.Fatalf("Reserve over the cap after kill -9: %v, want ErrBudgetExceeded", err)
	}
	for i := range 2 {
		tk, err := s.TakeTicket(ctx, fmt.Sprintf("journal-key-%d", i), time.Now())
		if err != nil || tk.ID != fmt.Sprintf("j%d", i) || tk.ReservationID == "" {
			t.Fatalf("ticket %d after kill -9 = %+v, %v", i, tk, err)
		}
	}
	// Two of three trial calls were used before the kill: one is left.
	if ok, used, err := s.TakeTrial(ctx, "198.51.100.4", crashDay, 3, 48*time.Hour); err != nil || !ok || used != 3 {
		t.Fatalf("third trial call after kill -9 = %v, %d, %v; want true, 3", ok, used, err)
	}
	if ok, used, err := s.TakeTrial(ctx, "198.51.100.4", crashDay, 3, 48*time.Hour); err != nil || ok || used != 3 {
		t.Fatalf("fourth trial call after kill -9 = %v, %d, %v; want false, 3", ok, used, err)
	}
}
