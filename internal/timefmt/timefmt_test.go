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
