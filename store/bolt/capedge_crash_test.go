package bolt_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/payguard/payguard/store"
	"github.com/payguard/payguard/store/bolt"
)

// capEdgeChildEnv makes the re-executed test binary reserve tickets at the edge of a cap from many goroutines
// at once, as the proxy's decisions do now that no lock serializes them, and take (release the payment of)
// every other one, printing each success, until it is killed.
const capEdgeChildEnv = "PAYGUARD_BOLT_CAPEDGE_CRASH_CHILD"

const (
	capEdgeWorkers = 8
	capEdgeAmount  = 1_000
	capEdgeRoom    = 400 // reservations the cap has room for
)

func capEdgeChild(path string) error {
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
	far := time.Now().Add(time.Hour)
	errc := make(chan error, capEdgeWorkers)
	for w := range capEdgeWorkers {
		go func() {
			for i := 0; ; i++ {
				key := fmt.Sprintf("edge-%d-%d", w, i)
				tk := store.Ticket{ID: key, Key: key, ExpiresAt: far}
				_, err := s.ReserveTicket(ctx, "edge", crashDay, capEdgeAmount, capEdgeRoom*capEdgeAmount, tk)
				if errors.Is(err, store.ErrBudgetExceeded) {
					report("refused")
					continue
				}
				if err != nil {
					errc <- err
					return
				}
				report("reserved " + key)
				if i%2 == 0 {
					report("taking " + key) // from here until "taken", the kill may leave it either way
					if _, err := s.TakeTicket(ctx, key, time.Now()); err != nil {
						errc <- err
						return
					}
					report("taken " + key)
				}
			}
		}()
	}
	return <-errc
}

// Reservations made side by side at the edge of the cap, killed mid-stream: after the restart the cap still
// holds, every reservation reported made is counted, every ticket whose payment was released (taken) stays
// taken, and every ticket reported made and not taken can still be taken.
func TestCapEdgeReservationsSurviveKill9(t *testing.T) {
	path := filepath.Join(t.TempDir(), "payguard.db")
	child, r := startChild(t, capEdgeChildEnv, path)
	reserved, taking, taken := map[string]bool{}, map[string]bool{}, map[string]bool{}
	refused := 0
	read := func(line string) {
		f := strings.Fields(line)
		switch {
		case len(f) == 1 && f[0] == "refused":
			refused++
		case len(f) == 2 && f[0] == "reserved":
			reserved[f[1]] = true
		case len(f) == 2 && f[0] == "taking":
			taking[f[1]] = true
		case len(f) == 2 && f[0] == "taken":
			taken[f[1]] = true
		default:
			t.Fatalf("unexpected child output %q", line)
		}
	}
	// Kill once the cap is reached and refusals are coming: some writes are in flight.
	killMidStream(t, child, r, read, func() bool { return refused >= 50 },
		func() string { return fmt.Sprintf("%d reservations", len(reserved)) })
	if len(reserved) > capEdgeRoom {
		t.Fatalf("%d reservations reported under a cap with room for %d", len(reserved), capEdgeRoom)
	}

	s, err := bolt.Open(path, bolt.Options{})
	if err != nil {
		t.Fatalf("reopen after kill -9: %v", err)
	}
	defer s.Close()
	ctx := context.Background()
	st, err := s.State(ctx, "edge", crashDay)
	if err != nil || st.Spent+st.Reserved > capEdgeRoom*capEdgeAmount || st.Reserved < int64(len(reserved))*capEdgeAmount {
		t.Fatalf("ledger after kill -9 %+v (%v): over the cap, or fewer than the %d reservations reported", st, err, len(reserved))
	}
	for key := range reserved {
		if taking[key] && !taken[key] {
			continue // the kill came during its take
		}
		_, err := s.TakeTicket(ctx, key, time.Now())
		switch {
		case taken[key] && err == nil:
			t.Errorf("ticket %s was taken before the kill, and could be taken again after it", key)
		case !taken[key] && err != nil:
			t.Errorf("ticket %s was reserved before the kill, and is lost: %v", key, err)
		}
	}
}
