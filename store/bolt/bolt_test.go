package bolt_test

import (
	"context"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/payguard/payguard/store"
	"github.com/payguard/payguard/store/bolt"
	"github.com/payguard/payguard/store/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		s, err := bolt.Open(filepath.Join(t.TempDir(), "payguard.db"), bolt.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

func openBench(b *testing.B) *bolt.Store {
	s, err := bolt.Open(filepath.Join(b.TempDir(), "payguard.db"), bolt.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

func BenchmarkReserveCommit(b *testing.B) { storetest.BenchReserveCommit(b, openBench(b)) }

func BenchmarkReserveTicket(b *testing.B) { storetest.BenchReserveTicket(b, openBench(b)) }

func BenchmarkPaymentCycle(b *testing.B) { storetest.BenchPaymentCycle(b, openBench(b)) }

func BenchmarkReserveCommitParallel(b *testing.B) {
	b.SetParallelism(8)
	storetest.BenchReserveCommitParallel(b, openBench(b))
}

// The trial counter and the nonce mark are the serve path's store writes: one per trial call, one per paid
// call. 32 goroutines (16 × GOMAXPROCS 2, like wrk's 32 connections), each call on a distinct key, so every
// call writes. ns/op is wall time per call across all goroutines (1 / throughput).
func BenchmarkTakeTrialParallel(b *testing.B) {
	s := openBench(b)
	var n atomic.Int64
	b.SetParallelism(16)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			// Spread over the key space as wrk's random client addresses are (a sequential key would only
			// ever append to the last page).
			i := uint32(n.Add(1)) * 2654435761
			client := strconv.Itoa(int(i>>24)) + "." + strconv.Itoa(int(i>>16&255)) + "." + strconv.Itoa(int(i>>8&255)) + "." + strconv.Itoa(int(i&255))
			if ok, _, err := s.TakeTrial(context.Background(), client, "2026-11-22", 3, 48*time.Hour); err != nil || !ok {
				b.Error(ok, err)
				return
			}
		}
	})
}

func BenchmarkMarkPaymentSeenParallel(b *testing.B) {
	s := openBench(b)
	var n atomic.Int64
	b.SetParallelism(16)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := s.MarkPaymentSeen(context.Background(), "sha256:"+strconv.FormatInt(n.Add(1), 10), time.Hour); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
