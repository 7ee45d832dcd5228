package server

import (
	"net/http"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/payguard/payguard/server/internal/metrictest"
)

// record counts every request in its route and status's series, through the cache and past its bound (a
// status per request for 400 statuses), and creates no series before a request has it.
func TestRecordCountsEverySeries(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := newMetrics(reg)
	if got := metrictest.Counters(t, reg); len(got) != 0 {
		t.Fatalf("series before any request: %v", got)
	}
	for range 3 {
		for status := 100; status < 500; status++ {
			m.record("/v1/preflight", status, time.Millisecond)
		}
		m.record("/nope", 200, time.Millisecond)
	}
	got := metrictest.Counters(t, reg)
	for status := 100; status < 500; status++ {
		if n := got["payguard_server_requests_total|"+strconv.Itoa(status)+"|/v1/preflight"]; n != 3 {
			t.Fatalf("status %d counted %v times, want 3", status, n)
		}
	}
	if n := got["payguard_server_requests_total|200|other"]; n != 3 || len(got) != 401 {
		t.Fatalf("other/200 counted %v times; %d series", n, len(got))
	}
	if len(m.served) > maxServedSeries {
		t.Fatalf("%d series cached, bound %d", len(m.served), maxServedSeries)
	}
	if n := histogramCount(t, reg, "/v1/preflight"); n != 1200 {
		t.Fatalf("%d latencies observed, want 1200", n)
	}
}

func histogramCount(t *testing.T, reg *prometheus.Registry, route string) uint64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "payguard_server_request_seconds" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "route" && l.GetValue() == route {
					return m.GetHistogram().GetSampleCount()
				}
			}
		}
	}
	return 0
}

// setHeaders sets what Header.Set sets, canonical keys included, and an Add to one value leaves the others.
func TestSetHeadersIsSet(t *testing.T) {
	kv := []string{"Content-Type", "application/json", "x-data-as-of", "2026-11-27", "Content-Length", "12", "X-Trial-Limit", ""}
	got, want := http.Header{"Cache-Control": {"no-store"}}, http.Header{"Cache-Control": {"no-store"}}
	setHeaders(got, kv...)
	for i := 0; i < len(kv); i += 2 {
		want.Set(kv[i], kv[i+1])
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("setHeaders %v, Header.Set %v", got, want)
	}
	got.Add("Content-Type", "text/plain")
	if got.Get("X-Data-As-Of") != "2026-11-27" || len(got.Values("Content-Type")) != 2 || got.Get("Content-Length") != "12" {
		t.Fatalf("an Add changed another header: %v", got)
	}
}
