package store

import (
	"testing"
	"time"
)

// isDay accepts exactly what time.Parse(DayLayout) accepts and Format gives back unchanged: every day of a
// span of years (leap days included), and strings that are almost days.
func TestIsDayIsParseThenFormat(t *testing.T) {
	byParse := func(s string) bool {
		d, err := time.Parse(DayLayout, s)
		return err == nil && d.Format(DayLayout) == s
	}
	var cases []string
	for d := time.Date(1999, 12, 25, 0, 0, 0, 0, time.UTC); d.Year() < 2102; d = d.AddDate(0, 0, 1) {
		cases = append(cases, d.Format(DayLayout))
	}
	cases = append(cases, "", "2026-11-2", "2026-11-222", "2026-1-022", "2026/11/22", "2026-11-22T00:00:00Z",
		"2026-02-29", "2024-02-29", "2100-02-29", "2000-02-29", "2026-02-30", "2026-04-31", "2026-13-01",
		"2026-00-10", "2026-10-00", "2026-10-32", "0000-01-01", "9999-12-31", "-026-11-22", "+026-11-22",
		"2026-+1-22", "2026-1a-22", "２026-11-22", "2026-11-22\x00", " 026-11-22", "2026-11- 2", "2026--1-22")
	for _, c := range cases {
		if got, want := isDay(c), byParse(c); got != want {
			t.Errorf("isDay(%q) = %v, time.Parse and Format say %v", c, got, want)
		}
	}
}

// FuzzIsDay holds isDay to time.Parse then Format on any string (review36): a day CheckDay lets through
// that Parse refuses would key a ledger day no other path names.
func FuzzIsDay(f *testing.F) {
	for _, s := range []string{"2026-11-27", "2024-02-29", "2026-02-29", "0000-01-01", "9999-12-31", "2026-1-022", "-026-11-22"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := time.Parse(DayLayout, s)
		if want := err == nil && d.Format(DayLayout) == s; isDay(s) != want {
			t.Fatalf("isDay(%q) = %v, time.Parse and Format say %v", s, !want, want)
		}
	})
}
