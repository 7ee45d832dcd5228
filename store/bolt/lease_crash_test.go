package bolt_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/payguard/payguard/store"
	"github.com/payguard/payguard/store/bolt"
)

// leaseChildEnv makes the re-executed test binary a proxy that keeps issuing tickets, paying some (taking
// the ticket, then reporting the payment as forwarded) and abandoning the rest, until it is killed.
const leaseChildEnv = "PAYGUARD_BOLT_LEASE_CHILD"

// leaseStartEnv is the start of the lease clock (unix ns), shared by every child of one test.
const leaseStartEnv = "PAYGUARD_BOLT_LEASE_START"

const (
	leaseAmount = 10_000
	leaseCap    = 300 * leaseAmount
	leaseSpeed  = 600 // the lease clock runs 600 times as fast as the wall clock: a 60 s ticket lives 100 ms
)

// leaseClock is the children's clock: leaseSpeed times the wall clock since start.
func leaseClock(start time.Time) func() time.Time {
	wall := time.Now()
	offset := time.Duration(0)
	if d := wall.Sub(start); d > 0 {
		offset = d * leaseSpeed
	}
	return func() time.Time { return start.Add(offset + time.Since(wall)*leaseSpeed) }
}

// leaseChild issues 60 s tickets against leaseCap on the lease clock, from 8 goroutines. A fifth of them
// it pays: it takes the ticket with a clock that lags by up to 150 s (as a replica whose clock is slow
// would), so takes race the store's releases, and reports "paid <reservation>" before the payment would
// leave; half of those it commits (settled), the other half stay unknown. It reports "issued" per ticket.
func leaseChild(path string) error {
	ns, err := strconv.ParseInt(os.Getenv(leaseStartEnv), 10, 64)
	if err != nil {
		return err
	}
	now := leaseClock(time.Unix(0, ns))
	s, err := bolt.Open(path, bolt.Options{Now: now})
	if err != nil {
		return err
	}
	ctx := context.Background()
	var mu sync.Mutex
	report := func(line string) {
		mu.Lock()
		defer mu.Unlock()
		os.Stdout.WriteString(line + "\n") // one write(2): in the pipe before the next step
	}
	report("ready")
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(ns), uint64(g)))
			for i := 0; ; i++ {
				key := fmt.Sprintf("%d-%d-%d", os.Getpid(), g, i)
				_, err := s.ReserveTicket(ctx, "agent", crashDay, leaseAmount, leaseCap,
					store.Ticket{Key: key, ExpiresAt: now().Add(time.Minute)})
				if errors.Is(err, store.ErrBudgetExceeded) {
					time.Sleep(time.Millisecond)
					continue
				}
				if err != nil {
					report("error " + err.Error())
					return
				}
				report("issued")
				if r.IntN(5) != 0 {
					continue
				}
				time.Sleep(time.Duration(r.IntN(250)) * time.Millisecond) // up to 150 s of lease time past the expiry
				got, err := s.TakeTicket(ctx, key, now().Add(-time.Duration(r.IntN(150))*time.Second))
				if errors.Is(err, store.ErrNotFound) {
					continue // expired or released: the payment would be decided afresh, not released
				}
				if err != nil {
					report("error " + err.Error())
					return
				}
				report("paid " + got.ReservationID)
				if r.IntN(2) == 0 {
					if err := s.Commit(ctx, "agent", crashDay, got.ReservationID); err != nil {
						report("error " + err.Error())
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	return errors.New("a worker stopped")
}

// Killed with -9 at random moments while it issues, pays and abandons tickets, a proxy never forwards
// more than the cap, whatever the interleaving of takes, releases and the kill: every payment it reported
// forwarded still holds its reservation after the restarts, and the sum of them stays within the cap. The
// releases are real: the tickets issued add up to well over the cap.
func TestLeasesSurviveKill9(t *testing.T) {
	path := filepath.Join(t.TempDir(), "payguard.db")
	start := time.Now()
	t.Setenv(leaseStartEnv, strconv.FormatInt(start.UnixNano(), 10))
	paid := map[string]bool{}
	issued := 0
	for round := range 4 {
		child, out := startChild(t, leaseChildEnv, path)
		if line, err := out.ReadString('\n'); err != nil || strings.TrimSpace(line) != "ready" {
			t.Fatalf("round %d: child did not get ready: %q, %v", round, line, err)
		}
		lines := make(chan string, 1024)
		go func() {
			defer close(lines)
			for {
				line, err := out.ReadString('\n')
				if err != nil {
					return
				}
				lines <- strings.TrimSpace(line)
			}
		}()
		// Killed once it has issued a random number of tickets (150 to 300; four rounds pass the cap's 300 only by
		// reusing released budget), or after 10 s if it cannot.
		killAt, thisRound := 150+rand.IntN(151), 0
		deadline := time.After(10 * time.Second)
		killed := false
		kill := func() {
			if !killed {
				killed = true
				if err := child.Process.Signal(syscall.SIGKILL); err != nil {
					t.Fatal(err)
				}
			}
		}
	read:
		for {
			select {
			case line, ok := <-lines:
				if !ok {
					break read
				}
				switch {
				case line == "issued":
					issued++
					if thisRound++; thisRound >= killAt {
						kill()
					}
				case strings.HasPrefix(line, "paid "):
					paid[strings.TrimPrefix(line, "paid ")] = true
				default:
					t.Fatalf("round %d: child reported %q", round, line)
				}
			case <-deadline:
				kill()
			}
		}
		kill()
		child.Wait()
	}

	// Far past every ticket: all that is left counted is what was taken (reported or not, if the kill came
	// between the take and the report).
	s, err := bolt.Open(path, bolt.Options{Now: func() time.Time { return start.Add(48 * time.Hour) }})
	if err != nil {
		t.Fatalf("reopen after the kills: %v", err)
	}
	defer s.Close()
	ctx := context.Background()
	st, err := s.State(ctx, "agent", crashDay)
	if err != nil {
		t.Fatal(err)
	}
	forwarded := int64(len(paid)) * leaseAmount
	t.Logf("issued %d tickets ($%d.%02d), forwarded %d payments; after the kills spent %d reserved %d (cap %d)",
		issued, issued*leaseAmount/1_000_000, issued*leaseAmount/10_000%100, len(paid), st.Spent, st.Reserved, leaseCap)
	if st.Spent+st.Reserved > leaseCap {
		t.Fatalf("spent %d + reserved %d exceeds the cap %d", st.Spent, st.Reserved, leaseCap)
	}
	if forwarded > st.Spent+st.Reserved {
		t.Fatalf("payments forwarded total %d but the ledger counts only %d: a forwarded payment lost its reservation", forwarded, st.Spent+st.Reserved)
	}
	for id := range paid {
		if err := s.Commit(ctx, "agent", crashDay, id); err != nil {
			t.Fatalf("the reservation of forwarded payment %s is gone: %v", id, err)
		}
	}
	if issued*leaseAmount <= leaseCap {
		t.Fatalf("only %d tickets issued against a cap of %d tickets: releases did not free the budget", issued, leaseCap/leaseAmount)
	}
}
