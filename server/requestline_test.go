//go:build unix

package server

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/payguard/payguard/internal/logout"
	"github.com/payguard/payguard/server/core"
	"github.com/payguard/payguard/store/memory"
)

// The hand-encoded request line is byte for byte what slog's JSON handler writes for the same record: hostile
// methods and paths (quotes, control bytes, invalid UTF-8, U+2028, HTML), every optional field present or
// absent, latencies at the edges of encoding/json's plain float format, times in other zones and with a
// monotonic reading.
func TestRequestLineAsSlogWritesIt(t *testing.T) {
	strs := []string{"", "POST", "/v1/preflight", `/a"b\c`, "/\x00\x01\x1f\x7f\n\r\t", "/\xff\xfe", "/\u2028\u2029",
		"/<script>&amp;", "/é/日本", strings.Repeat("/x", 300)}
	lats := []float64{0, 0.001, 0.5, 1, 123.456, 1e6, 9.999999e20, 1e-6}
	zone := time.FixedZone("X", -(3*3600 + 30*60))
	times := []time.Time{time.Now(), time.Date(2026, 11, 27, 16, 0, 0, 0, time.UTC), time.Date(2026, 1, 2, 3, 4, 5, 600, zone),
		time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC)}
	n := 0
	for i, s := range strs {
		for j, lat := range lats {
			for k, now := range times {
				l := requestLine{method: s, path: strs[(i+j)%len(strs)], status: []int{200, 402, 0, 599}[k],
					bytes: int64(i * j * 1000), latencyMs: lat}
				if j%2 == 0 {
					l.errCode = strs[(i+k)%len(strs)]
				}
				if k%2 == 0 {
					l.payment = "trial"
				}
				if (i+j+k)%3 != 0 {
					l.decision, l.rcpt = s, strs[(j+k)%len(strs)]
				}
				got, ok := appendRequestLine(nil, now, &l)
				if !ok {
					t.Fatalf("%+v at %v: left to slog", l, now)
				}
				if want := slogLine(t, now, &l); !bytes.Equal(got, want) {
					t.Fatalf("by hand:\n%s\nslog:\n%s", got, want)
				}
				n++
			}
		}
	}
	// What slog writes otherwise (a year outside 0–9999, an exponent, NaN) is left to slog.
	for _, c := range []struct {
		now time.Time
		lat float64
	}{{time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), 1}, {time.Now(), 1e21}, {time.Now(), 1e-7}, {time.Now(), math.NaN()}, {time.Now(), math.Inf(1)}} {
		if _, ok := appendRequestLine(nil, c.now, &requestLine{latencyMs: c.lat}); ok {
			t.Errorf("%v, latency %v: written by hand", c.now, c.lat)
		}
	}
}

func slogLine(t *testing.T, now time.Time, l *requestLine) []byte {
	t.Helper()
	var buf bytes.Buffer
	r := slog.NewRecord(now, slog.LevelInfo, "request", 0)
	var room [requestFields]slog.Attr
	r.AddAttrs(l.attrs(&room)...)
	if err := slog.NewJSONHandler(&buf, nil).Handle(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// Through serve's handler (logout's, which takes lines), a preflight's request line is written by hand,
// whole, with its decision and receipt, and never the body or the query; an INFO line waits for the flush.
func TestRequestLineThroughLogout(t *testing.T) {
	var out bytes.Buffer
	w := logout.NewWriter(&out, time.Hour)
	s := benchServerWith(t, memory.New(), slog.New(logout.NewHandler(w, slog.LevelInfo)), nil)
	req := httptest.NewRequest(http.MethodPost, "/v1/preflight?trial=1&secret=q", strings.NewReader(benchRateBody))
	req.RemoteAddr = "192.0.2.1:1234"
	req.Header.Set("X-Forwarded-For", "10.9.8.7")
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	if out.Len() != 0 {
		t.Fatalf("an INFO line was written before the flush: %s", out.String())
	}
	w.Close()
	var line map[string]any
	if err := json.Unmarshal(out.Bytes(), &line); err != nil || !bytes.HasSuffix(out.Bytes(), []byte("}\n")) {
		t.Fatalf("%v: %q", err, out.String())
	}
	var res struct {
		Decision string
		Receipt  struct{ ID string }
	}
	json.Unmarshal(rec.Body.Bytes(), &res)
	if line["msg"] != "request" || line["method"] != "POST" || line["path"] != "/v1/preflight" || line["status"] != 200.0 ||
		line["payment"] != "trial" || line["decision"] != res.Decision || line["receipt_id"] != res.Receipt.ID || res.Receipt.ID == "" ||
		line["bytes"] != float64(rec.Body.Len()) {
		t.Fatalf("%s", out.String())
	}
	if strings.Contains(out.String(), "secret") || strings.Contains(out.String(), "api.example.com") {
		t.Fatalf("the query or the body is in the log: %s", out.String())
	}
}

// Behind a real net/http server the middleware sets the body's read deadline itself (so ReadBody does not set
// it again) for a request with a body, and not for one without.
func TestMiddlewareSetsTheBodyDeadline(t *testing.T) {
	s := benchServerWith(t, memory.New(), nil, nil)
	got := make(chan bool, 1)
	srv := httptest.NewServer(s.middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d, ok := w.(core.BodyDeadline)
		got <- ok && d.BodyDeadlineSet()
	})))
	defer srv.Close()
	for _, c := range []struct {
		body string
		want bool
	}{{"{}", true}, {"", false}} {
		resp, err := http.Post(srv.URL, "application/json", strings.NewReader(c.body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if set := <-got; set != c.want {
			t.Errorf("body %q: deadline set %v, want %v", c.body, set, c.want)
		}
	}
}
