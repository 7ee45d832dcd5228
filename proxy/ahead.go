package proxy

import (
	"context"
	"errors"

	"github.com/payguard/payguard/store"
)

// A plain allow in one round trip to a shared store (issue 36; store.TicketAhead, the redis store). The
// engine reads the day's spend only in the daily cap's comparison (policy.OverDailyCap: the option is
// chosen before it, and it only adds the daily-cap reason), and the store makes that same comparison
// atomically with the reservation. So a challenge may first be decided on an assumed spend of 0: an allow
// is then reserved with its ticket in one script that also reads the day's figures and the seller's alarm,
// and reserves nothing when the seller has an alarm stored. Reserved, the allow is the one the engine gives
// on the ledger's real figures (their spend passed the same comparison), and the input the receipt is
// signed over (a journal's) names those figures, read in the same atomic step. Any other outcome is decided
// again on the ledger's state read as before (decideOnce's next attempt): a decision that is not allow on
// the assumed spend, an alarm stored for the seller, the cap refusing (the engine's own daily-cap block
// then, on the new figures), the site's unpaid bound, an error; so every refusal's receipt names the
// ledger's figures. The cap is never passed: the assumed spend only chooses which round trip comes first.

// aheadTicket is a decision's ahead reservation: the seller's alarm key, and what the store answered.
type aheadTicket struct {
	host   string
	before store.BudgetState // the day's figures before the reservation, when reserved
}

// errAheadAlarm: the ahead reservation reserved nothing, an alarm being stored for the seller.
var errAheadAlarm = errors.New("an alarm is stored for the seller: decided on the ledger's read")

// canDecideAhead: the store makes the ahead reservation and keeps the alarms the proxy reads (readState's
// condition), the challenge gets a ticket, the seller has an alarm key (site, alarmSite's), and the agent
// has no cap of its own (the engine then judges the global cap, the one the store compares).
func (p *Proxy) canDecideAhead(ag *agentRules, site string, withTicket bool) bool {
	if !withTicket || ag == nil || ag.capMicros > 0 || site == "" {
		return false
	}
	_, ahead := p.opts.Store.(store.TicketAhead)
	own, keeps := p.opts.Store.(store.Alarms)
	return ahead && keeps && p.alarms == own
}

// reserveTicketAhead is ReserveTicket made ahead (store.TicketAhead): errAheadAlarm when nothing was
// reserved because of an alarm.
func (p *Proxy) reserveTicketAhead(ctx context.Context, day string, amountMicros, capMicros int64, t store.Ticket, a *aheadTicket) (store.Ticket, error) {
	got, err := p.opts.Store.(store.TicketAhead).ReserveTicketAhead(ctx, p.opts.Budget, day, a.host, amountMicros, capMicros, t, p.opts.Now())
	if err != nil {
		return store.Ticket{}, err
	}
	if !got.Reserved {
		return store.Ticket{}, errAheadAlarm
	}
	a.before = got.State
	return got.Ticket, nil
}
