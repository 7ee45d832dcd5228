// Package timefmt formats an instant that rarely changes once: serve stamps every answer with the
// sanctions data's date (data_as_of, X-Data-As-Of, the receipt), which changes once a day, and time.Format
// allocates a new string on every call.
package timefmt

import (
	"sync/atomic"
	"time"
)

// RFC3339 formats instants as time.RFC3339 in UTC, remembering the last one. The zero value is ready; it is
// safe for concurrent use.
type RFC3339 struct{ last atomic.Pointer[formatted] }

type formatted struct {
	t time.Time
	s string
}

// Format is t.UTC().Format(time.RFC3339), formatted anew only when t is another instant than the last call's.
func (m *RFC3339) Format(t time.Time) string {
	if f := m.last.Load(); f != nil && f.t.Equal(t) {
		return f.s
	}
	s := t.UTC().Format(time.RFC3339)
	m.last.Store(&formatted{t: t, s: s})
	return s
}

// Seconds formats instants as time.RFC3339 in UTC (whole seconds), remembering the last second formatted:
// a receipt's ts is stamped on every decision, and decisions within one second share its text. The zero
// value is ready; it is safe for concurrent use.
type Seconds struct{ last atomic.Pointer[second] }

type second struct {
	unix int64
	s    string
}

// Format is t.UTC().Format(time.RFC3339), formatted anew only when t is in another second than the last
// call's.
func (m *Seconds) Format(t time.Time) string {
	u := t.Unix()
	if f := m.last.Load(); f != nil && f.unix == u {
		return f.s
	}
	s := t.UTC().Format(time.RFC3339)
	m.last.Store(&second{unix: u, s: s})
	return s
}
