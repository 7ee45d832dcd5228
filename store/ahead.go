package store

import (
	"context"
	"time"
)

// TicketAhead is a store that can make an allowed 402's reservation and ticket before the day's figures are
// read, in one round trip with them (redis: one script, issue 36: a fleet's decision in one round trip
// instead of StateAndAlarm then ReserveTicket). It is sound for a decision whose only use of the day's
// spend is the cap comparison: the caller decides on an assumed spend, and the store then, atomically,
// releases the due leases, reads the day's spent and reserved, reads the seller's alarm (host, a key of
// store.Alarms) and, only when no alarm is stored for host, reserves under the cap with the ticket exactly
// as ReserveTicket does. The cap is the store's atomic comparison, as ever: the assumed spend never reserves
// past it.
//
// The outcome, in Ahead: Reserved with the ticket stored, State the figures before this reservation (which
// the caller's receipt then names); or nothing reserved because an alarm is stored for host (Alarm and
// AlarmErr as StateAndAlarm gives them: an alarm no longer in force is ErrNotFound, and the caller decides
// on State and reserves as usual); or ErrBudgetExceeded with State the figures that refused it; or
// ErrConflict (the ticket id is held); or another error, with nothing reserved.
type TicketAhead interface {
	ReserveTicketAhead(ctx context.Context, budget, day, host string, amountMicros, capMicros int64, t Ticket, now time.Time) (Ahead, error)
}

// Ahead is TicketAhead's outcome.
type Ahead struct {
	Reserved bool
	Ticket   Ticket      // when Reserved: the ticket stored, its reservation filled in
	State    BudgetState // the day's figures before this reservation, or those that refused it
	Alarm    Alarm       // when not Reserved and AlarmErr is nil: the seller's alarm in force
	AlarmErr error       // when not Reserved: nil (Alarm in force), ErrNotFound (stored, no longer in force) or why it is unreadable
}
