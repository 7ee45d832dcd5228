package storetest

import (
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/payguard/payguard/store"
)

// BenchReserveCommit measures one Reserve followed by its Commit on one budget, from one goroutine.
func BenchReserveCommit(b *testing.B, s store.Store) {
	b.ReportAllocs()
	for b.Loop() {
		id, err := s.Reserve(ctx, "bench", day, 1, math.MaxInt64)
		if err != nil {
			b.Fatal(err)
		}
		if err := s.Commit(ctx, "bench", day, id); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchReserveCommitParallel is BenchReserveCommit from GOMAXPROCS goroutines (b.SetParallelism scales it)
// contending for the same budget, the proxy's case under concurrent agents.
func BenchReserveCommitParallel(b *testing.B, s store.Store) {
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			id, err := s.Reserve(ctx, "bench", day, 1, math.MaxInt64)
			if err != nil {
				b.Error(err)
				return
			}
			if err := s.Commit(ctx, "bench", day, id); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchReserveTicket measures the proxy's write for an allowed challenge: one ReserveTicket, each with its
// own ticket id under one ticket key (the same URL asked again and again), from one goroutine.
func BenchReserveTicket(b *testing.B, s store.Store) {
	b.ReportAllocs()
	tk := newTicket("", "GET https://seller.example/a eip155:8453 0xasset 0xpay 10000", base.Add(24*time.Hour))
	for b.Loop() {
		tk.ID = ""
		if _, err := s.ReserveTicket(ctx, "bench", day, 1, math.MaxInt64, tk); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchPaymentCycle measures the proxy's store work for one allowed payment from one goroutine: the 402's
// ReserveTicket, then the paid retry's MarkPaymentSeen and TakeTicket, then the settlement's Commit.
func BenchPaymentCycle(b *testing.B, s store.Store) {
	b.ReportAllocs()
	tk := newTicket("", "GET https://seller.example/a eip155:8453 0xasset 0xpay 10000", base.Add(24*time.Hour))
	n := 0
	for b.Loop() {
		n++
		tk.ID = ""
		got, err := s.ReserveTicket(ctx, "bench", day, 1, math.MaxInt64, tk)
		if err != nil {
			b.Fatal(err)
		}
		if err := s.MarkPaymentSeen(ctx, "sha256:cycle-"+strconv.Itoa(n)+"-"+got.ReservationID, time.Hour); err != nil {
			b.Fatal(err)
		}
		if _, err := s.TakeTicket(ctx, tk.Key, base); err != nil {
			b.Fatal(err)
		}
		if err := s.Commit(ctx, "bench", day, got.ReservationID); err != nil {
			b.Fatal(err)
		}
	}
}
