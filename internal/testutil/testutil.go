// Package testutil is the tests' one toolbox for time and start-up: Eventually waits for a condition with a
// deadline (a poll without one hangs a broken test forever, and a fixed sleep before "nothing happened"
// proves nothing), Clock is the one settable clock a test injects where code takes a now func, and Listen
// and Serve start a server on a listener the test already holds, so no test races another for a free port.
//
// A deadline here only turns a hang into a failure: no test asserts that something took less than a given
// wall-clock time (under -race on a busy machine that is noise, not a property).
package testutil

import (
	"net"
	"net/http"
	"sync"
	"testing"
	"time"
)

// Eventually polls cond every few milliseconds until it holds, and fails the test with the message
// (fmt.Sprintf(format, args...)) when it has not held within the deadline. The deadline guards against a
// hang; pick it generously (seconds), it is not a performance bound.
func Eventually(tb testing.TB, within time.Duration, cond func() bool, format string, args ...any) {
	tb.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("not within %s: "+format, append([]any{within}, args...)...)
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Clock is a settable clock, safe for concurrent use: pass its Now where code takes a now func, and move it
// with Set or Advance.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// NewClock starts a clock at t.
func NewClock(t time.Time) *Clock { return &Clock{t: t} }

// Now is the clock's time.
func (c *Clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

// Set moves the clock to t.
func (c *Clock) Set(t time.Time) { c.mu.Lock(); c.t = t; c.mu.Unlock() }

// Advance moves the clock by d.
func (c *Clock) Advance(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// Listen returns a TCP listener on a free loopback port, closed when the test ends. Hand it to the server
// under test (http.Server.Serve and the like) instead of picking a port and hoping it is still free.
func Listen(tb testing.TB) net.Listener {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { ln.Close() })
	return ln
}

// Serve serves h on a listener from Listen until the test ends, and returns the server's base URL
// (http://127.0.0.1:port).
func Serve(tb testing.TB, h http.Handler) string {
	tb.Helper()
	ln := Listen(tb)
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(ln) }()
	tb.Cleanup(func() { srv.Close(); <-done })
	return "http://" + ln.Addr().String()
}
