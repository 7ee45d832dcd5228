package trial

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/payguard/payguard/store/memory"
)

// Take names the UTC day of its clock and the next 00:00 UTC, however the clock moves (forwards over
// midnight, backwards, in another time zone), as formatting the time on every call did: the day is
// remembered between calls, and must never be the remembered one when the clock has left it.
func TestTakeDayFollowsTheClock(t *testing.T) {
	var now time.Time
	g := New(memory.New(), 1000, 48*time.Hour, func() time.Time { return now })
	east := time.FixedZone("UTC+14", 14*3600)
	base := time.Date(2026, 11, 27, 23, 59, 59, 999_999_999, time.UTC)
	times := []time.Time{base, base.Add(time.Nanosecond), base, base.Add(-24 * time.Hour), base.In(east),
		base.Add(time.Nanosecond).In(east), time.Date(2028, 2, 29, 12, 0, 0, 0, time.UTC), time.Date(2026, 12, 31, 23, 0, 0, 0, east)}
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		times = append(times, base.Add(time.Duration(r.Int64N(int64(400*24*time.Hour)))-200*24*time.Hour))
	}
	for i, at := range times {
		now = at
		u := at.UTC()
		wantDay := u.Format("2006-01-02")
		wantReset := time.Date(u.Year(), u.Month(), u.Day()+1, 0, 0, 0, 0, time.UTC)
		day, reset := g.day(at)
		if day != wantDay || !reset.Equal(wantReset) || reset.Location() != time.UTC {
			t.Fatalf("%d: %v: day %s, reset %v; want %s, %v", i, at, day, reset, wantDay, wantReset)
		}
		if i < 8 {
			res, err := g.Take(context.Background(), "192.0.2.1")
			if err != nil || !res.OK || !res.ResetsAt.Equal(wantReset) {
				t.Fatalf("%d: Take: %+v, %v", i, res, err)
			}
		}
	}
}

// ClientKey: IPv4 as written canonically, other spellings of one address to the same key, IPv6 by /64,
// anything else verbatim; a canonical IPv4 address costs no allocation.
func TestClientKey(t *testing.T) {
	for in, want := range map[string]string{
		"192.0.2.1": "192.0.2.1", "::ffff:192.0.2.1": "192.0.2.1", "0.0.0.0": "0.0.0.0", "255.255.255.255": "255.255.255.255",
		"2001:db8:1:2:aaaa::1": "2001:db8:1:2::/64", "2001:DB8:1:2::9": "2001:db8:1:2::/64", "not an ip": "not an ip",
		"192.0.2.01": "192.0.2.01", "": "",
	} {
		if got := ClientKey(in); got != want {
			t.Errorf("ClientKey(%q) = %q, want %q", in, got, want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { _ = ClientKey("198.51.100.27") }); n != 0 {
		t.Errorf("ClientKey of a canonical IPv4 address: %v allocations", n)
	}
}
