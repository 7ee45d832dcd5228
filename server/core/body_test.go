package core

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

// readAll reads what io.ReadAll of a LimitReader reads, whatever the declared length says (true, too small,
// too large, unknown), for bodies around the limit, in whole or one byte at a time, and passes a read error
// on.
func TestReadAllIsLimitedReadAll(t *testing.T) {
	const limit = 65
	for _, size := range []int{0, 1, 63, 64, 65, 66, 200, 1000} {
		body := bytes.Repeat([]byte("abcdefg"), size/7+1)[:size]
		want, _ := io.ReadAll(io.LimitReader(bytes.NewReader(body), limit))
		for _, declared := range []int64{-1, 0, 1, int64(size) - 1, int64(size), int64(size) + 1, limit - 1, limit, 1 << 40} {
			for name, r := range map[string]io.Reader{"whole": bytes.NewReader(body), "bytewise": iotest.OneByteReader(bytes.NewReader(body))} {
				got, err := readAll(r, declared, limit)
				if err != nil || !bytes.Equal(got, want) {
					t.Fatalf("%d bytes, declared %d, %s: %q, %v; want %q", size, declared, name, got, err, want)
				}
			}
		}
	}
	boom := errors.New("boom")
	if _, err := readAll(iotest.ErrReader(boom), 10, limit); !errors.Is(err, boom) {
		t.Fatalf("a read error: %v", err)
	}
	if got, err := readAll(iotest.TimeoutReader(bytes.NewReader([]byte("abcdef"))), 6, limit); !errors.Is(err, iotest.ErrTimeout) || string(got) != "abcdef" {
		t.Fatalf("an error after some bytes: %q, %v", got, err)
	}
}

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
