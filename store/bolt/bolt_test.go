package bolt_test

import (
	"path/filepath"
	"testing"

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

func BenchmarkReserveCommitParallel(b *testing.B) {
	b.SetParallelism(8)
	storetest.BenchReserveCommitParallel(b, openBench(b))
}
