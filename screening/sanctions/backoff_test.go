package sanctions

import (
	"bytes"
	"context"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// gaugeValue is the value of the single gauge series named name in reg; it fails when the series is absent.
func gaugeValue(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	v, ok := gaugeIn(t, reg, name)
	if !ok {
		t.Fatalf("no series %s", name)
	}
	return v
}

// gaugeIn is the gauge series named name in reg, if present.
func gaugeIn(t *testing.T, reg *prometheus.Registry, name string) (float64, bool) {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name && len(mf.GetMetric()) == 1 {
			return mf.GetMetric()[0].GetGauge().GetValue(), true
		}
	}
	return 0, false
}

// A refresher started while the list's server fails retries after seconds, not after its daily interval:
// 15 s, 30 s, 60 s, … doubling up to the interval, each delay in its step's upper half (jitter), one log
// line per failure with the delay, and back to the interval once a download succeeds. Before that first
// success, the list's gauges are absent (no sentinel), and the error's time and the next attempt are there.
func TestRunRetriesWithBackoff(t *testing.T) {
	srv := &listServer{}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	srv.set(nil, "", time.Time{})
	srv.mu.Lock()
	srv.status = http.StatusServiceUnavailable
	srv.mu.Unlock()

	now := time.Date(2026, 11, 25, 8, 0, 0, 0, time.UTC)
	var logs bytes.Buffer
	reg := prometheus.NewRegistry()
	waits := make(chan time.Duration)
	fire := make(chan time.Time)
	jitter := 0.0
	s := NewScreener(nil)
	r, err := NewRefresher(s, RefresherConfig{
		URLs: []string{ts.URL + "/SDN.CSV"}, CacheDir: t.TempDir(), MinEntries: 4, Interval: 10 * time.Minute,
		Registerer: reg, Logger: slog.New(slog.NewJSONHandler(&logs, nil)), Now: func() time.Time { return now },
		After:  func(d time.Duration) <-chan time.Time { waits <- d; return fire },
		Jitter: func() float64 { return jitter },
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go r.Run(ctx)

	// Failures 1..7 with no jitter: the lower bound of each step, capped at the interval's half.
	want := []time.Duration{7500 * time.Millisecond, 15 * time.Second, 30 * time.Second, time.Minute, 2 * time.Minute,
		4 * time.Minute, 5 * time.Minute}
	for i, w := range want {
		if got := <-waits; got != w {
			t.Fatalf("wait after failure %d = %v, want %v", i+1, got, w)
		}
		if i == 0 {
			if _, ok := gaugeIn(t, reg, "payguard_sanctions_entries"); ok {
				t.Error("entries gauge present with no list loaded")
			}
			if _, ok := gaugeIn(t, reg, "payguard_sanctions_last_success_timestamp_seconds"); ok {
				t.Error("last success gauge present before any success")
			}
			if got := gaugeValue(t, reg, "payguard_sanctions_list_loaded"); got != 0 {
				t.Errorf("list_loaded = %v, want 0", got)
			}
			if got := gaugeValue(t, reg, "payguard_sanctions_last_error_timestamp_seconds"); got != float64(now.Unix()) {
				t.Errorf("last error gauge = %v", got)
			}
			if h := r.Health(); !h.NextAttempt.Equal(now.Add(w)) {
				t.Errorf("next attempt %v, want %v", h.NextAttempt, now.Add(w))
			}
		}
		if i == 6 {
			jitter = math.Nextafter(1, 0) // the top of the step: still capped at the interval
		}
		fire <- now
	}
	if got := <-waits; got > 10*time.Minute || got < 10*time.Minute-time.Second {
		t.Fatalf("wait after failure 8 (top jitter) = %v, want the 10m interval", got)
	}
	if n := strings.Count(logs.String(), "refresh failed"); n != 8 {
		t.Errorf("%d failure log lines for 8 failures", n)
	}
	if !strings.Contains(logs.String(), `"retry_in":"8s"`) {
		t.Errorf("failure log does not say when it retries: %s", logs.String())
	}

	// The server recovers: the next try succeeds and Run goes back to the interval.
	srv.set(map[string][]byte{"sdn.csv": readFixture(t, "sdn.csv")}, `"v1"`, now.Add(-time.Hour))
	jitter = 0
	fire <- now
	if got := <-waits; got != 10*time.Minute {
		t.Fatalf("wait after a success = %v, want the interval", got)
	}
	if !s.Ready() || r.Health().ConsecutiveFailures != 0 {
		t.Fatalf("after recovery: ready %v, health %+v", s.Ready(), r.Health())
	}
	if got := gaugeValue(t, reg, "payguard_sanctions_list_age_seconds"); got != 3600 {
		t.Errorf("list age = %v, want 3600 (Last-Modified an hour back)", got)
	}
	if got := s.List().DataAsOfSource(); got != AsOfLastModified {
		t.Errorf("data_as_of source %q, want %q", got, AsOfLastModified)
	}
	cancel()
}
