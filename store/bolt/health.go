package bolt

import (
	"bytes"
	"context"
	"fmt"

	"github.com/payguard/payguard/store"
)

var _ store.Health = (*Store)(nil)

// probeRecord is what Healthy writes to learn whether the journal takes writes again: a length no record
// has (readJournal stops at it), removed at once.
var probeRecord = bytes.Repeat([]byte{0xff}, 8)

// Healthy implements store.Health: nil while the ledger takes payments. A failed commit stops the ledger
// until a restart (ledgerlog.go); a failed journal write (a full disk) refuses every payment until a write
// succeeds again, which Healthy itself tries with a probe record so that readiness comes back when the disk
// does, even while no payment arrives (a proxy that is not ready may get none). The probe writes where a
// record would: within the journal's last block it can succeed while a longer record would not, in which
// case the next payment's failure makes the store unhealthy again.
func (s *Store) Healthy(context.Context) error {
	l := &s.log
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := s.usableLocked(); err != nil {
		return err
	}
	if l.journalErr == nil {
		return nil
	}
	f := l.journals[l.cur]
	_, err := f.Write(probeRecord)
	if terr := f.Truncate(l.sizes[l.cur]); err == nil {
		err = terr
	}
	if err != nil {
		return fmt.Errorf("%w (still failing: %v)", l.journalErr, err)
	}
	l.journalErr = nil
	return nil
}
