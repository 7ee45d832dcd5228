package memory

import (
	"time"

	"github.com/payguard/payguard/store"
)

// releaseLocked releases the reservation of every ticket that expired unused more than
// store.TicketReleaseGrace before now, marking the ticket used so that it can be neither taken nor
// released again; s.mu is held. It reports how many it released. Taking and releasing both run under
// s.mu, so a ticket is one or the other (store.Tickets).
func (s *Store) releaseLocked(now time.Time) int {
	if s.nextRelease.IsZero() || !now.After(s.nextRelease.Add(store.TicketReleaseGrace)) {
		return 0
	}
	released := 0
	var next time.Time
	for _, list := range s.tickets {
		for _, t := range list {
			if t.Used {
				continue
			}
			if !now.After(t.ExpiresAt.Add(store.TicketReleaseGrace)) {
				if next.IsZero() || t.ExpiresAt.Before(next) {
					next = t.ExpiresAt
				}
				continue
			}
			t.Used = true
			b := s.budgets[budgetDay{t.Budget, t.Day}]
			if b == nil {
				continue
			}
			if r := b.reservations[t.ReservationID]; r != nil && !r.committed {
				b.reserved -= r.amount
				delete(b.reservations, t.ReservationID)
				released++
			}
		}
	}
	s.nextRelease = next
	return released
}
