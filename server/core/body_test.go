package core

import (
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

// deadlineWriter counts the read deadlines ReadBody sets through http.ResponseController.
type deadlineWriter struct {
	http.ResponseWriter
	preset bool
	set    []time.Time
}

func (d *deadlineWriter) SetReadDeadline(t time.Time) error { d.set = append(d.set, t); return nil }
func (d *deadlineWriter) BodyDeadlineSet() bool             { return d.preset }

// ReadBody sets the body's read deadline and clears it after the whole body; when the writer says the
// deadline is already set (the server's middleware set it), it only clears it.
func TestReadBodyDeadlines(t *testing.T) {
	for _, preset := range []bool{false, true} {
		w := &deadlineWriter{ResponseWriter: httptest.NewRecorder(), preset: preset}
		r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(`{"a":1}`))
		body, e := ReadBody(w, r, MaxBodyBytes)
		if e != nil || string(body) != `{"a":1}` {
			t.Fatalf("preset %v: %q, %v", preset, body, e)
		}
		want := 2
		if preset {
			want = 1
		}
		if len(w.set) != want || !w.set[len(w.set)-1].IsZero() {
			t.Errorf("preset %v: deadlines set %v; want %d, the last one cleared", preset, w.set, want)
		}
		if !preset && (w.set[0].IsZero() || time.Until(w.set[0]) > BodyReadTimeout) {
			t.Errorf("the first deadline %v is not BodyReadTimeout from now", w.set[0])
		}
	}
	// A body that fails to arrive keeps the deadline (expired), preset or not: nothing clears it.
	for _, preset := range []bool{false, true} {
		w := &deadlineWriter{ResponseWriter: httptest.NewRecorder(), preset: preset}
		r := httptest.NewRequest(http.MethodPost, "/", iotest.ErrReader(os.ErrDeadlineExceeded))
		if _, e := ReadBody(w, r, MaxBodyBytes); e == nil || e.Code != CodeBodyTimeout {
			t.Fatalf("preset %v: %v", preset, e)
		}
		for _, d := range w.set {
			if d.IsZero() {
				t.Errorf("preset %v: the deadline was cleared after a failed read", preset)
			}
		}
	}
}
