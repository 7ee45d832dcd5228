package bolt

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/payguard/payguard/internal/testutil"
)

// fileTrial reads the counter at day+client from the file itself (not the journal's figures).
func fileTrial(t *testing.T, s *Store, day, client string) (c trialCount, ok bool) {
	t.Helper()
	err := s.db.View(func(tx *bbolt.Tx) error {
		c, ok = decodeTrial(tx.Bucket(bucketTrial).Get([]byte(day + client)))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return c, ok
}

func journalSize(t *testing.T, s *Store) int64 {
	t.Helper()
	var n int64
	for i := range s.log.journals {
		fi, err := os.Stat(journalPath(s.Path(), i))
		if err != nil {
			t.Fatal(err)
		}
		n += fi.Size()
	}
	return n
}

// A trial call counts at once, before the file has it; a refusal journals nothing; the applier's commit
// brings the file to the count.
func TestTrialCountsBeforeTheCommit(t *testing.T) {
	ctx := context.Background()
	s := openLog(t, filepath.Join(t.TempDir(), "p.db"))
	defer s.Close()
	release := holdCommits(t, s)
	defer release()

	for i := 1; i <= 2; i++ {
		if ok, used, err := s.TakeTrial(ctx, "203.0.113.7", logDay, 2, time.Hour); err != nil || !ok || used != i {
			t.Fatalf("call %d = %v, %d, %v", i, ok, used, err)
		}
	}
	if _, ok := fileTrial(t, s, logDay, "203.0.113.7"); ok {
		t.Fatal("the file has the counter while its commit is held back")
	}
	size := journalSize(t, s)
	if size == 0 {
		t.Fatal("nothing journaled")
	}
	if ok, used, err := s.TakeTrial(ctx, "203.0.113.7", logDay, 2, time.Hour); err != nil || ok || used != 2 {
		t.Fatalf("third call = %v, %d, %v; want refused at 2", ok, used, err)
	}
	if got := journalSize(t, s); got != size {
		t.Fatalf("a refused call journaled %d bytes", got-size)
	}

	release()
	if err := s.flush(ctx); err != nil {
		t.Fatal(err)
	}
	if c, ok := fileTrial(t, s, logDay, "203.0.113.7"); !ok || c.count != 2 {
		t.Fatalf("file after the commit: count %d (present %v); want 2", c.count, ok)
	}
	s.log.mu.Lock()
	left := len(s.log.trials)
	s.log.mu.Unlock()
	if left != 0 {
		t.Fatalf("%d counters still held in memory after their commit", left)
	}
	// Read back from the file now: still refused.
	if ok, used, err := s.TakeTrial(ctx, "203.0.113.7", logDay, 2, time.Hour); err != nil || ok || used != 2 {
		t.Fatalf("call after the commit = %v, %d, %v; want refused at 2", ok, used, err)
	}
}

// A replayed trial record never lowers what the file has: not a smaller count of the same entry, and not an
// older entry (one that expires earlier) over a newer one.
func TestTrialReplayNeverLowersACount(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "p.db")
	s := openLog(t, path)
	for range 3 {
		if _, _, err := s.TakeTrial(ctx, "c", logDay, 5, time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.flush(ctx); err != nil {
		t.Fatal(err)
	}
	c, _ := fileTrial(t, s, logDay, "c")
	exp := c.expires
	s.Close()

	writeJournal(t, path, 0, nil,
		ledgerOp{Seq: 1, Kind: opTrial, Day: logDay, ID: "c", Amount: 1, Expires: exp},           // lower count
		ledgerOp{Seq: 2, Kind: opTrial, Day: logDay, ID: "c", Amount: 9, Expires: exp - 1},       // older entry
		ledgerOp{Seq: 3, Kind: opTrial, Day: logDay, ID: "other", Amount: 2, Expires: exp + 1e9}) // new: applied
	s = openLog(t, path)
	defer s.Close()
	if ok, used, err := s.TakeTrial(ctx, "c", logDay, 5, time.Hour); err != nil || !ok || used != 4 {
		t.Fatalf("after the replay = %v, %d, %v; want true, 4", ok, used, err)
	}
	if ok, used, err := s.TakeTrial(ctx, "other", logDay, 5, time.Hour); err != nil || !ok || used != 3 {
		t.Fatalf("replayed counter = %v, %d, %v; want true, 3", ok, used, err)
	}
}

// When an earlier call's commit lands while a later call on the same counter is still queued, the counter
// keeps the later count: the file (one call behind) is not read back until the later call is applied too.
func TestTrialCounterOutlivesAnEarlierCommit(t *testing.T) {
	ctx := context.Background()
	s := openLog(t, filepath.Join(t.TempDir(), "p.db"))
	defer s.Close()
	release := holdCommits(t, s)
	defer release()
	s.log.mu.Lock()
	gate := s.log.applyGate
	s.log.mu.Unlock()
	queueTaken := func() {
		t.Helper()
		testutil.Eventually(t, 10*time.Second, func() bool {
			s.log.mu.Lock()
			defer s.log.mu.Unlock()
			return len(s.log.queue) == 0
		}, "the applier took the queued batch")
	}

	if ok, _, err := s.TakeTrial(ctx, "203.0.113.9", logDay, 2, time.Hour); err != nil || !ok {
		t.Fatalf("first call = %v, %v", ok, err)
	}
	queueTaken() // the applier holds the first call's batch at the gate
	if ok, _, err := s.TakeTrial(ctx, "203.0.113.9", logDay, 2, time.Hour); err != nil || !ok {
		t.Fatalf("second call = %v, %v", ok, err)
	}
	gate <- struct{}{} // the first batch commits and settles; the applier then takes the second one
	queueTaken()
	if c, ok := fileTrial(t, s, logDay, "203.0.113.9"); !ok || c.count != 1 {
		t.Fatalf("file after the first commit: %+v (present %v); want count 1", c, ok)
	}
	if ok, used, err := s.TakeTrial(ctx, "203.0.113.9", logDay, 2, time.Hour); err != nil || ok || used != 2 {
		t.Fatalf("third call with the second still queued = %v, %d, %v; want refused at 2", ok, used, err)
	}
}

// TakeTrial reads the file's counter before it takes the journal's lock. A commit that lands between that
// read and the lock, and settles the counter the read did not see, must not let the stale read through: the
// second call of a one-call quota is refused. (Taking the read as it was gives the client the call again.)
func TestTrialReadBeforeTheLockMissesNoCommit(t *testing.T) {
	ctx := context.Background()
	s := openLog(t, filepath.Join(t.TempDir(), "p.db"))
	defer s.Close()
	release := holdCommits(t, s)
	defer release()

	if ok, used, err := s.TakeTrial(ctx, "203.0.113.5", logDay, 1, time.Hour); err != nil || !ok || used != 1 {
		t.Fatalf("first call = %v, %d, %v", ok, used, err)
	}
	landed := false
	s.trialReadHook = func() { // the read is done and saw no counter: now the first call's commit lands
		if landed {
			return
		}
		landed = true
		release()
		if err := s.flush(ctx); err != nil {
			t.Error(err)
		}
		s.log.mu.Lock()
		defer s.log.mu.Unlock()
		if len(s.log.trials) != 0 {
			t.Error("the counter is still queued after its commit")
		}
	}
	if ok, used, err := s.TakeTrial(ctx, "203.0.113.5", logDay, 1, time.Hour); err != nil || ok || used != 1 {
		t.Fatalf("second call, its read before the first one's commit = %v, %d, %v; want refused at 1", ok, used, err)
	}
	if !landed {
		t.Fatal("the hook did not run")
	}
	if c, ok := fileTrial(t, s, logDay, "203.0.113.5"); !ok || c.count != 1 {
		t.Fatalf("file: %+v (present %v); want count 1", c, ok)
	}
}

// Many concurrent calls on a few clients, with commits landing all the time (no commit delay): every client
// gets exactly its quota, never more, never less, and the file ends with it.
func TestTrialQuotaExactUnderConcurrentCommits(t *testing.T) {
	ctx := context.Background()
	s, err := Open(filepath.Join(t.TempDir(), "p.db"), Options{CommitDelay: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const clients, limit, workers, calls = 6, 7, 16, 60
	var mu sync.Mutex
	granted := map[string]int{}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range calls {
				c := "198.51.100." + strconv.Itoa((w+i)%clients)
				ok, _, err := s.TakeTrial(ctx, c, logDay, limit, time.Hour)
				if err != nil {
					t.Error(err)
					return
				}
				if ok {
					mu.Lock()
					granted[c]++
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	if err := s.flush(ctx); err != nil {
		t.Fatal(err)
	}
	for i := range clients {
		c := "198.51.100." + strconv.Itoa(i)
		if granted[c] != limit {
			t.Errorf("%s: %d calls granted; want %d", c, granted[c], limit)
		}
		if fc, ok := fileTrial(t, s, logDay, c); !ok || fc.count != limit {
			t.Errorf("%s: file has %+v (present %v); want count %d", c, fc, ok, limit)
		}
	}
}
