// Package trial is the free-trial quota of the paid operations: SPEC §8.4's 3 calls per client IP per UTC day,
// one counter shared by the HTTP API and MCP, kept 48 hours. The counting lives in store.Trial so a fleet
// shares it.
package trial

import (
	"context"
	"fmt"
	"net/netip"
	"sync/atomic"
	"time"

	"github.com/payguard/payguard/store"
)

// Gate takes trial calls for clients. It is safe for concurrent use.
type Gate struct {
	store     store.Trial
	limit     int
	retention time.Duration
	now       func() time.Time
	today     atomic.Pointer[utcDay] // the last day Take saw: formatted once a day, not on every call
}

// utcDay is one UTC day: its name (2006-01-02) and its bounds.
type utcDay struct {
	name       string
	start, end time.Time // [start, end): 00:00 UTC of the day and of the next
}

// day is the UTC day of now and the next 00:00 UTC.
func (g *Gate) day(now time.Time) (string, time.Time) {
	if d := g.today.Load(); d != nil && !now.Before(d.start) && now.Before(d.end) {
		return d.name, d.end
	}
	u := now.UTC()
	start := time.Date(u.Year(), u.Month(), u.Day(), 0, 0, 0, 0, time.UTC)
	d := &utcDay{name: u.Format("2006-01-02"), start: start, end: start.AddDate(0, 0, 1)}
	g.today.Store(d)
	return d.name, d.end
}

// New returns a gate allowing limit calls per client per UTC day, counters kept for retention.
func New(s store.Trial, limit int, retention time.Duration, now func() time.Time) *Gate {
	if now == nil {
		now = time.Now
	}
	return &Gate{store: s, limit: limit, retention: retention, now: now}
}

// Result is the outcome of one Take.
type Result struct {
	OK       bool      // the call may proceed for free
	Used     int       // calls counted today, including this one when OK
	Limit    int       // calls allowed per UTC day
	ResetsAt time.Time // the next 00:00 UTC
}

// Limit is the number of free calls per client per UTC day.
func (g *Gate) Limit() int { return g.limit }

// Retention is how long a client's counter is kept after its day's first call.
func (g *Gate) Retention() time.Duration { return g.retention }

// Take counts one trial call for client (an IP address). A store failure is an error: the caller answers
// 503 and does not hand out free work it cannot count.
func (g *Gate) Take(ctx context.Context, client string) (Result, error) {
	day, reset := g.day(g.now())
	res := Result{Limit: g.limit, ResetsAt: reset}
	if g.limit <= 0 {
		return res, nil
	}
	ok, used, err := g.store.TakeTrial(ctx, ClientKey(client), day, g.limit, g.retention)
	if err != nil {
		return res, fmt.Errorf("trial: counting %s: %w", day, err)
	}
	res.OK, res.Used = ok, used
	return res, nil
}

// ClientKey is the counter key for a client address: an IPv4 address as is, an IPv6 address by its /64
// (one subscriber usually holds a whole /64, so counting single IPv6 addresses would make the quota
// unlimited). Anything that is not an address is used verbatim.
func ClientKey(client string) string {
	a, err := netip.ParseAddr(client)
	if err != nil {
		return client
	}
	a = a.Unmap()
	if a.Is6() {
		p, _ := a.Prefix(64)
		return p.String()
	}
	// An IPv4 address already written as its key (the usual case) is used as it is, without a new string.
	var room [len("255.255.255.255")]byte
	if k := a.AppendTo(room[:0]); string(k) != client {
		return string(k)
	}
	return client
}
