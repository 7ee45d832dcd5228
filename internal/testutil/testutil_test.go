package testutil

import (
	"io"
	"net/http"
	"sync/atomic"
	"testing"
	"time"
)

// fatalRecorder is a testing.TB whose Fatalf records the failure instead of ending the test.
type fatalRecorder struct {
	testing.TB
	failed atomic.Bool
}

func (f *fatalRecorder) Helper()               {}
func (f *fatalRecorder) Fatalf(string, ...any) { f.failed.Store(true) }

func TestEventually(t *testing.T) {
	var n atomic.Int64
	Eventually(t, 10*time.Second, func() bool { return n.Add(1) >= 3 }, "three polls")
	if n.Load() != 3 {
		t.Fatalf("polled %d times, want 3 (it stops once the condition holds)", n.Load())
	}
	r := &fatalRecorder{TB: t}
	Eventually(r, 20*time.Millisecond, func() bool { return false }, "never")
	if !r.failed.Load() {
		t.Fatal("a condition that never holds did not fail the test at the deadline")
	}
}

func TestClock(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	c := NewClock(t0)
	c.Advance(time.Hour)
	if !c.Now().Equal(t0.Add(time.Hour)) {
		t.Fatalf("Now = %s after Advance", c.Now())
	}
	c.Set(t0)
	if !c.Now().Equal(t0) {
		t.Fatalf("Now = %s after Set", c.Now())
	}
}

func TestServe(t *testing.T) {
	url := Serve(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") }))
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if b, _ := io.ReadAll(resp.Body); string(b) != "ok" {
		t.Fatalf("body %q", b)
	}
}
