package bolt_test

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/payguard/payguard/store"
	"github.com/payguard/payguard/store/bolt"
)

// BenchmarkReserveTicketApplied is what the proxy's decided 402 costs the bolt store in all: ReserveTicket on
// the request's goroutine and the applier's commit of it, under a ticket key that already holds `out`
// outstanding tickets (the live bench leaves every 402's ticket unpaid), flushed every `batch` operations
// (the live proxy at c=8 commits 20-40 reservations per CommitDelay). cpu-µs/op is the process's user+system
// CPU (getrusage) per operation, the applier's thread and the GC included; allocs/op and B/op count every
// goroutine's allocations, the applier's too.
//
//	go test ./store/bolt/ -run '^$' -bench ReserveTicketApplied -benchmem -benchtime 20000x
func BenchmarkReserveTicketApplied(b *testing.B) {
	for _, out := range []int{0, 100_000} {
		for _, batch := range []int{16, 64} {
			b.Run(fmt.Sprintf("out=%d/batch=%d", out, batch), func(b *testing.B) { benchApplied(b, out, batch) })
		}
	}
}

func benchApplied(b *testing.B, outstanding, batch int) {
	ctx := context.Background()
	s, err := bolt.Open(filepath.Join(b.TempDir(), "payguard.db"), bolt.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	const key = "GET https://seller.example/402 eip155:84532 0xasset 0xpay 10000"
	opt := []byte(`{"scheme":"exact","network":"eip155:84532","amount":"10000","asset":"0x036CbD53842c5426634e7929541eC2318f3dCF7e","payTo":"0x209693Bc6afc0C5328bA36FaF03C514EF312287C","maxTimeoutSeconds":300,"extra":{"name":"USDC","version":"2"}}`)
	day := time.Now().UTC().Format(store.DayLayout)
	reserve := func() {
		t := store.Ticket{ID: "tkt_" + store.NewID(), Key: key, Option: opt, ReceiptID: "rcpt_" + store.NewID(),
			ExpiresAt: time.Now().Add(time.Hour)}
		if _, err := s.ReserveTicket(ctx, "proxy", day, 10_000, math.MaxInt64, t); err != nil {
			b.Fatal(err)
		}
	}
	for i := 0; i < outstanding; i++ {
		reserve()
		if i%1000 == 999 {
			if err := bolt.Flush(s); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := bolt.Flush(s); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	before := cpuTime()
	n := 0
	for b.Loop() {
		reserve()
		if n++; n%batch == 0 {
			if err := bolt.Flush(s); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := bolt.Flush(s); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(cpuTime()-before)/float64(time.Microsecond)/float64(n), "cpu-µs/op")
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
