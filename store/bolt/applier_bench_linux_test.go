package bolt

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/payguard/payguard/store"
)

// BenchmarkApplierPaced queues ReserveTickets at a steady pace, as a proxy deciding 402s one at a time does
// (one every 400 µs: 2,500 a second, about payguard's rate at c=1), and reports what the applier spends per
// operation: its thread's CPU (applier-µs/op, from /proc's schedstat of the thread at nice 10) and the
// operations per commit (ops/commit). A commit's cost is mostly fixed, so the CommitDelay decides how much
// of the applier's CPU a decided 402 carries (docs/benchmarks/proxy.md, "tail402"):
//
//	go test -run '^$' -bench ApplierPaced -benchtime 5000x ./store/bolt
func BenchmarkApplierPaced(b *testing.B) {
	for _, delay := range []time.Duration{5 * time.Millisecond, DefaultCommitDelay, 100 * time.Millisecond} {
		b.Run("delay="+delay.String(), func(b *testing.B) {
			s, err := Open(filepath.Join(b.TempDir(), "payguard.db"), Options{CommitDelay: delay})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			ctx := context.Background()
			day := time.Now().UTC().Format(time.DateOnly)
			tk := store.Ticket{Key: "GET https://seller.example/a eip155:8453 0xasset 0xpay 10000",
				Option: []byte(`{"scheme":"exact","network":"eip155:8453","amount":"10000"}`),
				Budget: "agent", Day: day, AmountMicros: 10_000, ExpiresAt: time.Now().Add(24 * time.Hour)}
			// Warm up: the applier's thread takes its nice and the file its first pages.
			for range 50 {
				tk.ID = ""
				if _, err := s.ReserveTicket(ctx, "agent", day, 1, math.MaxInt64, tk); err != nil {
					b.Fatal(err)
				}
			}
			if err := s.flush(ctx); err != nil {
				b.Fatal(err)
			}
			tx0, cpu0 := s.benchTxID(b), applierCPU(b)
			const pace = 400 * time.Microsecond
			next := time.Now()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				tk.ID = ""
				if _, err := s.ReserveTicket(ctx, "agent", day, 1, math.MaxInt64, tk); err != nil {
					b.Fatal(err)
				}
				next = next.Add(pace)
				if d := time.Until(next); d > 0 {
					time.Sleep(d)
				}
			}
			if err := s.flush(ctx); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			commits := s.benchTxID(b) - tx0
			b.ReportMetric(float64(applierCPU(b)-cpu0)/1e3/float64(b.N), "applier-µs/op")
			b.ReportMetric(float64(b.N)/float64(max(commits, 1)), "ops/commit")
		})
	}
}

// benchTxID is the file's newest transaction id: the commits since a previous one, as nothing else writes.
func (s *Store) benchTxID(b *testing.B) uint64 {
	id, err := currentTxID(s.db)
	if err != nil {
		b.Fatal(err)
	}
	return id
}

// applierCPU is the CPU time (ns) of this process's threads at nice 10, which is the applier's alone
// (priority_linux.go): the first field of each one's /proc schedstat.
func applierCPU(b *testing.B) int64 {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		b.Skip("no /proc:", err)
	}
	var ns int64
	found := false
	for _, t := range tasks {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/self/task/%s/stat", t.Name()))
		if err != nil {
			continue
		}
		f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if len(f) < 17 || f[16] != strconv.Itoa(applierNice) {
			continue
		}
		sched, err := os.ReadFile(fmt.Sprintf("/proc/self/task/%s/schedstat", t.Name()))
		if err != nil {
			continue
		}
		v, err := strconv.ParseInt(strings.Fields(string(sched))[0], 10, 64)
		if err != nil {
			b.Fatal(err)
		}
		ns += v
		found = true
	}
	if !found {
		b.Skip("no thread at nice", applierNice, "(setpriority refused?)")
	}
	return ns
}
