package redis

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/payguard/payguard/store"
)

// reserveTicketAheadScript is store.TicketAhead in one script: reserveTicketScript's KEYS and ARGV, then the
// alarms hash (KEYS[7]) and the seller's host (ARGV[14]). The leases due are released first, then the day's
// figures and the host's alarm are read; an alarm stored reserves nothing: {3, spent, reserved, alarm JSON}.
// Else reserveTicketScript's work: {1, spent, reserved} (the figures before the reservation), {0, spent,
// reserved} (over the cap) or {2} (the ticket id is held).
var reserveTicketAheadScript = guarded(sweepLua + reserveLua + reserveTicketLua + `
sweep(ARGV[6])
local f = redis.call('HMGET', KEYS[1], 'spent', 'reserved', 'x')
local spent, reserved = f[1] or '0', f[2] or '0'
ledger_x = f[3] -- reserve() needs no read of its own of the ledger's expiry
local alarm = redis.call('HGET', KEYS[7], ARGV[14])
if alarm then return {3, spent, reserved, alarm} end
local res = reserve_ticket()
if res[1] == 1 then return {1, spent, reserved} end
return res
`)

var _ store.TicketAhead = (*Store)(nil)

// ReserveTicketAhead implements store.TicketAhead in one script (one round trip per allowed 402).
func (s *Store) ReserveTicketAhead(ctx context.Context, budget, day, host string, amountMicros, capMicros int64, t store.Ticket, now time.Time) (store.Ahead, error) {
	if host == "" {
		return store.Ahead{}, errors.New("store/redis: reserve ahead without the seller's host")
	}
	t, keys, args, err := s.ticketArgs(budget, day, amountMicros, capMicros, t)
	if err != nil {
		return store.Ahead{}, err
	}
	keys = append(keys, s.alarmsK)
	args = append(args, host)
	res, err := s.runOwned(ctx, reserveTicketAheadScript, keys, args).Slice()
	if err != nil {
		return store.Ahead{}, fmt.Errorf("store/redis: reserve in budget %s on %s: %w", budget, day, s.lost(err))
	}
	if len(res) == 1 && res[0] == int64(2) {
		return store.Ahead{}, fmt.Errorf("%w: ticket %s already exists", store.ErrConflict, t.ID)
	}
	if len(res) < 3 {
		return store.Ahead{}, fmt.Errorf("store/redis: reserve-ahead script returned %v", res)
	}
	st, err := stateOf(budget, day, res[1:3])
	if err != nil {
		return store.Ahead{}, err
	}
	switch {
	case res[0] == int64(1) && len(res) == 3:
		return store.Ahead{Reserved: true, Ticket: t, State: st}, nil
	case res[0] == int64(0) && len(res) == 3:
		return store.Ahead{State: st}, fmt.Errorf("%w: budget %s on %s: spent %d + reserved %d + %d > cap %d",
			store.ErrBudgetExceeded, budget, day, st.Spent, st.Reserved, amountMicros, capMicros)
	case res[0] == int64(3) && len(res) == 4:
		v, _ := res[3].(string)
		a, alarmErr := readAlarm(host, v, now)
		return store.Ahead{State: st, Alarm: a, AlarmErr: alarmErr}, nil
	}
	return store.Ahead{}, fmt.Errorf("store/redis: reserve-ahead script returned %v", res)
}

// ticketArgs checks t and fills in what ReserveTicket does (budget, day, amount, reservation id, UTC
// expiry), and returns reserveTicketScript's keys and arguments for it.
func (s *Store) ticketArgs(budget, day string, amountMicros, capMicros int64, t store.Ticket) (store.Ticket, []string, []any, error) {
	t.Budget, t.Day, t.AmountMicros = budget, day, amountMicros
	if err := store.CheckTicket(&t); err != nil {
		return store.Ticket{}, nil, nil, err
	}
	if err := store.CheckReserve(budget, day, amountMicros, capMicros); err != nil {
		return store.Ticket{}, nil, nil, err
	}
	t.ReservationID = store.NewID()
	t.ExpiresAt = t.ExpiresAt.UTC()
	now := s.now()
	ttl := max(t.ExpiresAt.Sub(now), 0) + ticketGrace
	// Room for the alarms key (ReserveTicketAhead) and the epoch's key (run), so neither copies the slice.
	keys := make([]string, 0, 8)
	keys = append(keys, s.ledgerKey(budget, day), s.key("lease:", day, ":", budget),
		s.key("tq:", t.Key), s.key("topt:", t.Key), s.tidBucket(t.ID), s.key("tid:", t.ID))
	entry := appendSortable(make([]byte, 0, 20+store.TicketSizeMax(&t)), t.ExpiresAt)
	entry = store.AppendTicket(entry, &t, true)
	// Numbers as int64: go-redis writes them in decimal as strconv would, without a string of their own.
	args := make([]any, 0, 15)
	args = append(args, amountMicros, -amountMicros, capMicros, t.ReservationID, millis(LedgerRetention),
		unixMillisInt(now), unixMillisInt(t.ExpiresAt.Add(store.TicketReleaseGrace)),
		entry, t.ID, []byte(t.Option), millis(ttl), unixMillisInt(now.Add(ttl)),
		sortable(now.Add(-store.TicketReleaseGrace)))
	return t, keys, args, nil
}
