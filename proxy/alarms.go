package proxy

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/payguard/payguard/index"
	"github.com/payguard/payguard/policy"
	"github.com/payguard/payguard/preflight"
	"github.com/payguard/payguard/store"
)

// A settlement alarm: a seller reported a settlement its authorization does not allow (an upto settlement
// above the authorized maximum, on another network, for another payer or to another recipient). That
// seller's next payments are held for a person (policy.SettlementAlarmReason) until the alarm expires or
// an operator clears it. An alarm holds the seller's site (alarmSite), not the one spelling of its host the
// lying settlement came through: the seller controls every name under its registrable domain and, for an
// IPv6 seller, its whole /64, and an IPv4-mapped IPv6 address reaches the same IPv4 server (DELETE /v1/alarms/{host} on the admin API). The store keeps the alarms
// (store.Alarms: every replica of a bolt or redis store sees them, and restarts keep them); a State that
// keeps none gets a process-local set.

// alarmTTL is how long an alarm holds its seller's payments.
const alarmTTL = 24 * time.Hour

// alarmsOf is the store's alarms, or a process-local set when the store keeps none.
func alarmsOf(st State) store.Alarms {
	if a, ok := st.(store.Alarms); ok {
		return a
	}
	return &localAlarms{m: map[string]store.Alarm{}}
}

// localAlarms is store.Alarms in this process's memory, bounded by store.MaxAlarms.
type localAlarms struct {
	mu sync.Mutex
	m  map[string]store.Alarm
}

func (a *localAlarms) RaiseAlarm(_ context.Context, x store.Alarm) error {
	if err := store.CheckAlarm(x); err != nil {
		return err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, ok := a.m[x.Host]; !ok && len(a.m) >= store.MaxAlarms {
		oldest := ""
		for h, y := range a.m {
			if oldest == "" || y.At.Before(a.m[oldest].At) {
				oldest = h
			}
		}
		delete(a.m, oldest)
	}
	a.m[x.Host] = x
	return nil
}

func (a *localAlarms) Alarm(_ context.Context, host string, now time.Time) (store.Alarm, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	x, ok := a.m[host]
	if !ok || !now.Before(x.Until) {
		return store.Alarm{}, store.ErrNotFound
	}
	return x, nil
}

func (a *localAlarms) ClearAlarm(ctx context.Context, host string, now time.Time) error {
	if _, err := a.Alarm(ctx, host, now); err != nil {
		return err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.m, host)
	return nil
}

func (a *localAlarms) ListAlarms(_ context.Context, now time.Time) ([]store.Alarm, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := []store.Alarm{}
	for _, x := range a.m {
		if now.Before(x.Until) {
			out = append(out, x)
		}
	}
	return out, nil
}

// alarmSite is the key of a seller's alarm for a URL or a bare host (the DELETE path): its site as the Index
// reads one (index.SiteOf: registrable domain, canonical IPv4 address, IPv6 /64), "" for none.
func alarmSite(s string) string {
	if !strings.Contains(s, "://") {
		host := policy.MerchantDomain(s)
		if host == "" {
			return ""
		}
		if strings.Contains(host, ":") {
			host = "[" + host + "]"
		}
		s = "http://" + host + "/"
	}
	return index.SiteOf(s)
}

// raiseSellerAlarm records an alarm on host; a store that cannot record it is logged (the settlement itself
// is already counted at its worst, the whole maximum).
func (p *Proxy) raiseSellerAlarm(ctx context.Context, host, what string) {
	now := p.opts.Now()
	if err := p.alarms.RaiseAlarm(ctx, store.Alarm{Host: host, What: what, At: now, Until: now.Add(alarmTTL)}); err != nil {
		p.log.Error("settlement alarm not recorded", "host", host, "error", err.Error())
	}
}

// holdForAlarm turns an engine result for a seller under an alarm into a hold that says why: an allow
// becomes a hold with the alarm's reason alone, a hold gains it; a block stays as it is. The result is
// unsigned (the caller signs what it shows), so the receipt carries the hold. Alarms that cannot be read
// hold too (fail closed), with an internal-error reason. host is the seller's alarm key (alarmSite of the
// decision's URL).
func (p *Proxy) holdForAlarm(ctx context.Context, res *preflight.Result, host string, read *alarmRead) {
	if res.Decision != allow && res.Decision != hold {
		return
	}
	if host == "" {
		return
	}
	var x store.Alarm
	var err error
	if read != nil && read.host == host {
		x, err = read.alarm, read.err // read with the ledger's state (readState)
	} else {
		x, err = p.alarms.Alarm(ctx, host, p.opts.Now())
	}
	if errors.Is(err, store.ErrNotFound) {
		return
	}
	r := policy.SettlementAlarmReason(host, x.What)
	if err != nil {
		r = policy.InternalErrorReason("settlement alarms unavailable: " + err.Error())
	}
	if res.Decision == allow {
		res.Decision, res.Reasons, res.ReasonCodes = hold, nil, nil
		res.Receipt.Decision = hold
	}
	res.Reasons = append(res.Reasons, r.String())
	res.ReasonCodes = append(res.ReasonCodes, r.Code)
}

// alarmRead is a seller's alarm as read with the ledger's state: alarm in force, or err (ErrNotFound: none).
type alarmRead struct {
	host  string
	alarm store.Alarm
	err   error
}

// readState reads the budget's state for day and, when the store can give both in one round trip
// (store.StateAndAlarm, the redis store) and it keeps the alarms, the alarm of the seller whose alarm key is
// host (alarmSite of the decision's URL, the key holdForAlarm reads) with it; else the alarm is nil and
// holdForAlarm reads it on its own.
func (p *Proxy) readState(ctx context.Context, day, host string) (store.BudgetState, *alarmRead, error) {
	own, keeps := p.opts.Store.(store.Alarms)
	if sa, ok := p.opts.Store.(store.StateAndAlarm); ok && keeps && host != "" && p.alarms == own {
		st, a, alarmErr, err := sa.StateAndAlarm(ctx, p.opts.Budget, day, host, p.opts.Now())
		if err != nil {
			return st, nil, err
		}
		return st, &alarmRead{host: host, alarm: a, err: alarmErr}, nil
	}
	st, err := p.opts.Store.State(ctx, p.opts.Budget, day)
	return st, nil, err
}

// ticketUnderAlarm stops a payment released on a ticket minted before its seller's alarm (an agent that
// asked twice holds two tickets; the first payment's settlement raised the alarm): the payment is held
// instead, as its 402 would be now, and the ticket's reservation is released, since nothing is paid. The
// agent asks again and its 402 is held for a person (holdForAlarm). A ticket a person approved (a used hold)
// is not stopped: a person may approve each payment of a seller under alarm.
func (p *Proxy) ticketUnderAlarm(ctx context.Context, v verdict, url string) verdict {
	site := alarmSite(url)
	if v.Decision != allow || v.Release == nil || v.Hold != nil || site == "" {
		return v
	}
	x, err := p.alarms.Alarm(ctx, site, p.opts.Now())
	if errors.Is(err, store.ErrNotFound) {
		return v
	}
	r := policy.SettlementAlarmReason(site, x.What)
	if err != nil {
		r = policy.InternalErrorReason("settlement alarms unavailable: " + err.Error())
	}
	rel := v.Release
	if err := p.opts.Store.Settle(ctx, rel.Budget, rel.Day, rel.ReservationID, 0); err != nil {
		p.log.Error("reservation of a ticket under alarm not released", "reservation_id", rel.ReservationID, "error", err.Error())
	}
	return verdict{Decision: hold, Reasons: []string{r.String()}, Chosen: -1, Class: "payment_hold"}
}
