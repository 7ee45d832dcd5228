package memory_test

import (
	"testing"

	"github.com/payguard/payguard/store"
	"github.com/payguard/payguard/store/memory"
	"github.com/payguard/payguard/store/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return memory.New() })
}

func BenchmarkReserveCommit(b *testing.B) { storetest.BenchReserveCommit(b, memory.New()) }

func BenchmarkReserveCommitParallel(b *testing.B) {
	b.SetParallelism(8)
	storetest.BenchReserveCommitParallel(b, memory.New())
}
