package proxy

import (
	"testing"
	"time"

	"github.com/payguard/payguard/store/memory"
)

// TestDayFollowsTheClock holds the cached budget day (Proxy.day) to the day's name at every instant: across
// midnight UTC, in another zone, and a clock set back to an earlier day.
func TestDayFollowsTheClock(t *testing.T) {
	now := time.Date(2026, 11, 27, 23, 59, 59, 999_999_999, time.UTC)
	p, _, _ := newTestProxy(t, memory.New(), testRules(), func(o *setup) { o.Now = func() time.Time { return now } })
	defer p.Close()
	for _, at := range []time.Time{
		now, now.Add(time.Nanosecond), now.Add(time.Hour), now.Add(-24 * time.Hour),
		time.Date(2026, 11, 28, 1, 0, 0, 0, time.FixedZone("UTC+3", 3*3600)), // 2026-11-27 22:00 UTC
		time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
	} {
		now = at
		if got, want := p.day(), at.UTC().Format("2006-01-02"); got != want {
			t.Errorf("at %s: day %s, want %s", at, got, want)
		}
	}
}
