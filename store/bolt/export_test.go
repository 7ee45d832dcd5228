package bolt

import (
	"context"
	"os"

	bbolt "go.etcd.io/bbolt"
)

// HoldWriter takes bbolt's writer lock for good, so that no commit, the ledger applier's included, reaches
// the file any more: what the store then accepts exists only in the journal.
func HoldWriter(s *Store) {
	held := make(chan struct{})
	go s.db.Update(func(*bbolt.Tx) error {
		close(held)
		select {}
	})
	<-held
}

// FillDisk points the journals at /dev/full, whose writes fail with ENOSPC as on a full disk, and returns a
// function that gives the real journals back (the disk has room again).
func FillDisk(s *Store) (restore func()) {
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		panic(err)
	}
	s.log.mu.Lock()
	saved := s.log.journals
	s.log.journals = [2]*os.File{full, full}
	s.log.mu.Unlock()
	return func() {
		s.log.mu.Lock()
		s.log.journals = saved
		s.log.mu.Unlock()
		full.Close()
	}
}

// Flush waits until every ledger operation queued so far is committed to the file.
func Flush(s *Store) error { return s.flush(context.Background()) }
