package timefmt

import (
	"testing"
	"time"
)

// The memo answers what time.Format answers, for the same instant in any zone and after the instant changes.
func TestRFC3339(t *testing.T) {
	var m RFC3339
	a := time.Date(2026, 11, 27, 6, 0, 0, 0, time.UTC)
	b := a.Add(24 * time.Hour)
	east := time.FixedZone("east", 5*3600)
	for _, c := range []time.Time{a, a, a.In(east), b, b.In(east), a, {}} {
		if got, want := m.Format(c), c.UTC().Format(time.RFC3339); got != want {
			t.Fatalf("Format(%v) = %s, want %s", c, got, want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { m.Format(b) }); n != 0 {
		t.Fatalf("Format of the same instant allocates %v times", n)
	}
}

// The second's memo answers what time.Format answers, within a second, across seconds (either way), in any
// zone, and before 1970.
func TestSeconds(t *testing.T) {
	var m Seconds
	a := time.Date(2026, 11, 27, 6, 0, 0, 0, time.UTC)
	east := time.FixedZone("east", 5*3600)
	old := time.Date(1969, 12, 31, 23, 59, 59, 500_000_000, time.UTC)
	for _, c := range []time.Time{a, a.Add(999 * time.Millisecond), a.Add(time.Second), a.Add(time.Second).In(east), a.Add(-time.Nanosecond),
		a, old, old.Add(400 * time.Millisecond), old.Add(600 * time.Millisecond), {}} {
		if got, want := m.Format(c), c.UTC().Format(time.RFC3339); got != want {
			t.Fatalf("Format(%v) = %s, want %s", c, got, want)
		}
	}
	b := a.Add(time.Hour)
	m.Format(b)
	if n := testing.AllocsPerRun(100, func() { m.Format(b.Add(500 * time.Millisecond)) }); n != 0 {
		t.Fatalf("Format within the same second allocates %v times", n)
	}
}
