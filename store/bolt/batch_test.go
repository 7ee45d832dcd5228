package bolt

import (
	"encoding/binary"
	"errors"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/payguard/payguard/internal/testutil"
)

// Writes that find another write in flight share a batch; bbolt re-runs a batch without a function that
// failed. Each function's effects must then count once, its reported result must be the committed run's,
// and the failing caller must get its own error.
func TestWriteBatchRerun(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "payguard.db"), Options{BatchDelay: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	counter := []byte("batch-test")
	bump := func(tx *bbolt.Tx) (uint64, error) {
		b, err := tx.CreateBucketIfNotExists(counter)
		if err != nil {
			return 0, err
		}
		n := uint64(0)
		if v := b.Get(counter); len(v) == 8 {
			n = binary.BigEndian.Uint64(v)
		}
		n++
		return n, b.Put(counter, u64(n))
	}

	const callers = 16
	boom := errors.New("boom")
	var reruns atomic.Int64
	committed := uint64(0)
	// A re-run needs the failing function to run after another one in the same batch; bbolt runs a batch in
	// the order callers joined, which the scheduler decides, so the round is repeated until that happened
	// (the checks hold in every round).
	for round := 0; round < 20 && reruns.Load() == 0; round++ {
		// Hold the writer so that the callers below all find a write in flight and batch.
		holding, release := make(chan struct{}), make(chan struct{})
		go s.write(func(tx *bbolt.Tx) error {
			close(holding)
			<-release
			return nil
		})
		<-holding
		var wg sync.WaitGroup
		seen := make([]uint64, callers)
		errs := make([]error, callers)
		call := func(i int) {
			defer wg.Done()
			runs := 0
			errs[i] = s.write(func(tx *bbolt.Tx) error {
				runs++
				if runs > 1 {
					reruns.Add(1)
				}
				if i == 0 {
					return boom
				}
				n, err := bump(tx)
				seen[i] = n
				return err
			})
		}
		wg.Add(callers)
		for i := 1; i < callers; i++ {
			go call(i)
		}
		// the holder and callers 1..15 are in write
		testutil.Eventually(t, 10*time.Second, func() bool { return s.writers.Load() >= callers }, "%d writers", callers)
		go call(0) // most likely last in the batch
		testutil.Eventually(t, 10*time.Second, func() bool { return s.writers.Load() >= callers+1 }, "%d writers", callers+1)
		close(release)
		wg.Wait()

		if !errors.Is(errs[0], boom) {
			t.Fatalf("the failing caller got %v, want its own error", errs[0])
		}
		got := map[uint64]bool{}
		for i := 1; i < callers; i++ {
			if errs[i] != nil {
				t.Fatalf("caller %d: %v", i, errs[i])
			}
			if got[seen[i]] || seen[i] <= committed || seen[i] > committed+callers-1 {
				t.Fatalf("caller %d reports count %d; counts so far %v (each must be a distinct committed value)", i, seen[i], got)
			}
			got[seen[i]] = true
		}
		committed += callers - 1
	}
	var final uint64
	s.db.View(func(tx *bbolt.Tx) error {
		final = binary.BigEndian.Uint64(tx.Bucket(counter).Get(counter))
		return nil
	})
	if final != committed {
		t.Fatalf("counter %d after %d successful writes: a re-run counted twice or a write was lost", final, committed)
	}
	if reruns.Load() == 0 {
		t.Fatal("no function ran twice: the callers did not share a batch, so this test proved nothing")
	}
}
