package bolt

import bbolt "go.etcd.io/bbolt"

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
