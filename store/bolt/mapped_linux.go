package bolt

import (
	"syscall"

	"go.etcd.io/bbolt"
)

// dropMapped lets go of the file's pages this process has touched through bbolt's read-only map (issue 36:
// the proxy's RSS after 100,000 decisions). bbolt reads every page through the map, and every page a commit
// writes is read back by a later transaction, so the process's resident set came to hold most of the file
// (420 MB after two bursts of unpaid 402s with the old ticket form; 32 MB of file-backed RSS after 200,000
// decisions with the compact one). MADV_DONTNEED on a shared file map only drops this process's page table
// entries: the pages stay in the page cache (bbolt writes with pwrite, never through the map), and the next
// read of one maps it again with a minor fault.
//
// It runs inside a read transaction, which holds bbolt's map lock: the map cannot be replaced (and the range
// given to another mapping) meanwhile, and the transaction's size never exceeds the map.
func (s *Store) dropMapped() {
	_ = s.db.View(func(tx *bbolt.Tx) error {
		addr, n := s.db.Info().Data, uintptr(tx.Size())
		if addr == 0 || n == 0 {
			return nil
		}
		_, _, _ = syscall.Syscall(syscall.SYS_MADVISE, addr, n, syscall.MADV_DONTNEED)
		return nil
	})
}
