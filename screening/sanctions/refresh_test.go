package sanctions

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// listServer serves OFAC-named files from memory with ETag and Last-Modified, answering conditional
// requests with 304, and records what it was asked.
type listServer struct {
	mu       sync.Mutex
	files    map[string][]byte
	etag     string
	modified time.Time
	status   int  // when non-zero, answer every request with this status
	short    bool // announce more bytes than are sent (a cut download)
	requests []*http.Request
}

func (s *listServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, r)
	if s.status != 0 {
		w.WriteHeader(s.status)
		return
	}
	body, ok := s.files[strings.ToLower(filepath.Base(r.URL.Path))]
	if !ok {
		http.NotFound(w, r)
		return
	}
	if r.Header.Get("If-None-Match") == s.etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	w.Header().Set("ETag", s.etag)
	w.Header().Set("Last-Modified", s.modified.UTC().Format(http.TimeFormat))
	if s.short {
		w.Header().Set("Content-Length", strconv.Itoa(len(body)+100))
	}
	w.Write(body)
}

func (s *listServer) set(files map[string][]byte, etag string, modified time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.files, s.etag, s.modified, s.status, s.short = files, etag, modified, 0, false
}

func readFixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "basic", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestRefresher(t *testing.T) {
	srv := &listServer{}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	v1 := time.Date(2024, 5, 2, 18, 0, 0, 0, time.UTC)
	srv.set(map[string][]byte{"sdn.csv": readFixture(t, "sdn.csv"), "alt.csv": readFixture(t, "alt.csv")}, `"v1"`, v1)

	cache := t.TempDir()
	reg := prometheus.NewRegistry()
	var logs bytes.Buffer
	s := NewScreener(nil)
	cfg := RefresherConfig{
		URLs:       []string{ts.URL + "/exports/SDN.CSV", ts.URL + "/exports/ALT.CSV"},
		CacheDir:   cache,
		MinEntries: 4,
		Registerer: reg,
		Logger:     slog.New(slog.NewJSONHandler(&logs, nil)),
		Now:        func() time.Time { return time.Date(2024, 5, 3, 0, 0, 0, 0, time.UTC) },
	}
	r, err := NewRefresher(s, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if s.Ready() {
		t.Fatal("ready before any list")
	}
	if err := r.LoadCache(); err == nil {
		t.Fatal("LoadCache on an empty cache: no error")
	}
	ctx := context.Background()

	// 1. First download.
	if err := r.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	first := s.List()
	if !s.Ready() || first.Len() != 5 || !s.DataAsOf().Equal(v1) {
		t.Fatalf("after refresh: ready=%v len=%d data_as_of=%v; want 5 entries as of Last-Modified %v", s.Ready(), first.Len(), s.DataAsOf(), v1)
	}
	if len(s.ScreenAddress("0x7f367cc41522ce07553e823bf3be79a889debe1b")) != 1 {
		t.Error("address from the downloaded list not found")
	}
	if _, err := os.Stat(filepath.Join(cache, "current", "sdn.csv")); err != nil {
		t.Errorf("no cached copy: %v", err)
	}

	// 2. Unchanged: conditional request, 304, same list.
	if err := r.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if s.List() != first {
		t.Error("a 304 replaced the list")
	}
	last := srv.requests[len(srv.requests)-1]
	if last.Header.Get("If-None-Match") != `"v1"` || last.Header.Get("If-Modified-Since") == "" {
		t.Errorf("refresh was not conditional: %v", last.Header)
	}
	if got := metricValue(t, r.m.refreshes.WithLabelValues("not_modified")); got != 1 {
		t.Errorf("not_modified count = %v", got)
	}

	// 3. Bad downloads never replace the list; each is visible in Health and the metrics.
	bad := []struct {
		name  string
		files map[string][]byte
		code  int
		want  string
	}{
		{"empty body", map[string][]byte{"sdn.csv": {}, "alt.csv": readFixture(t, "alt.csv")}, 0, "empty download"},
		{"broken csv", map[string][]byte{"sdn.csv": []byte("1,\"A\"x\",b\r\n"), "alt.csv": readFixture(t, "alt.csv")}, 0, "parsing sdn.csv"},
		{"too few entries", map[string][]byte{"sdn.csv": []byte(strings.SplitAfterN(string(readFixture(t, "sdn.csv")), "\n", 4)[0]), "alt.csv": readFixture(t, "alt.csv")}, 0, "fewer than the minimum"},
		{"server error", nil, http.StatusInternalServerError, "HTTP 500"},
		{"cut download", map[string][]byte{"sdn.csv": readFixture(t, "sdn.csv"), "alt.csv": readFixture(t, "alt.csv")}, -1, "downloading sdn.csv"},
	}
	for i, b := range bad {
		srv.set(b.files, `"bad"`, v1.Add(time.Hour))
		srv.mu.Lock()
		if b.code > 0 {
			srv.status = b.code
		}
		srv.short = b.code == -1
		srv.mu.Unlock()
		err := r.Refresh(ctx)
		if err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("%s: err = %v, want %q", b.name, err, b.want)
		}
		if s.List() != first {
			t.Errorf("%s: the list was replaced", b.name)
		}
		h := r.Health()
		if h.ConsecutiveFailures != i+1 || h.LastError == "" || h.Entries != 5 {
			t.Errorf("%s: health = %+v", b.name, h)
		}
	}
	if got := gaugeValue(t, reg, "payguard_sanctions_refresh_consecutive_failures"); got != 5 {
		t.Errorf("consecutive failures gauge = %v, want 5", got)
	}
	if got := metricValue(t, r.m.refreshes.WithLabelValues("failure")); got != 5 {
		t.Errorf("failure count = %v, want 5", got)
	}
	if mfs, err := reg.Gather(); err != nil || len(mfs) < 4 {
		t.Errorf("registry holds %d metric families (err %v), want the refresher's", len(mfs), err)
	}
	if !strings.Contains(logs.String(), "refresh failed") {
		t.Error("failure not logged")
	}

	// 4. A shrunken list (under 90% of the current one) is refused.
	r.cfg.MinEntries = 1
	srv.set(map[string][]byte{"sdn.csv": []byte(strings.SplitAfterN(string(readFixture(t, "sdn.csv")), "\n", 5)[0] + "\x1a"), "alt.csv": readFixture(t, "alt.csv")}, `"small"`, v1)
	if err := r.Refresh(ctx); err == nil || !strings.Contains(err.Error(), "under 90%") {
		t.Errorf("shrunken list: err = %v", err)
	}
	r.cfg.MinEntries = 4

	// 5. A good new version replaces the list and resets the failure count.
	v2 := v1.Add(24 * time.Hour)
	bigger := append(bytes.TrimRight(readFixture(t, "sdn.csv"), "\x1a"), []byte(`3001,"NEW ENTRY LTD",-0- ,"SDGT",-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,-0- `+"\r\n\x1a")...)
	srv.set(map[string][]byte{"sdn.csv": bigger, "alt.csv": readFixture(t, "alt.csv")}, `"v2"`, v2)
	if err := r.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if s.List().Len() != 6 || !s.DataAsOf().Equal(v2) || r.Health().ConsecutiveFailures != 0 {
		t.Errorf("after v2: len=%d data_as_of=%v health=%+v", s.List().Len(), s.DataAsOf(), r.Health())
	}
	if got := gaugeValue(t, reg, "payguard_sanctions_last_success_timestamp_seconds"); got != float64(cfg.Now().Unix()) {
		t.Errorf("last success gauge = %v", got)
	}
	if got := gaugeValue(t, reg, "payguard_sanctions_entries"); got != 6 {
		t.Errorf("entries gauge = %v", got)
	}

	// 6. A restart serves the last good copy from the cache, with its data-as-of, before any download.
	srv.mu.Lock()
	srv.status = http.StatusServiceUnavailable
	srv.mu.Unlock()
	s2 := NewScreener(nil)
	r2, err := NewRefresher(s2, RefresherConfig{URLs: cfg.URLs, CacheDir: cache, MinEntries: 4, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if err := r2.LoadCache(); err != nil {
		t.Fatal(err)
	}
	if s2.List().Len() != 6 || !s2.DataAsOf().Equal(v2) {
		t.Errorf("from cache: len=%d data_as_of=%v", s2.List().Len(), s2.DataAsOf())
	}
	if err := r2.Refresh(ctx); err == nil || s2.List().Len() != 6 {
		t.Errorf("refresh against a failing server: err=%v len=%d", err, s2.List().Len())
	}
}

func TestRefresherDefaultsRejectTinyList(t *testing.T) {
	s := NewScreener(nil)
	r, err := NewRefresher(s, RefresherConfig{URLs: []string{"testdata/basic/sdn.csv"}, CacheDir: t.TempDir(),
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if r.cfg.Interval != 24*time.Hour || r.cfg.MinEntries != 5000 || r.cfg.MinRatio != 0.9 {
		t.Errorf("defaults = %v %v %v", r.cfg.Interval, r.cfg.MinEntries, r.cfg.MinRatio)
	}
	if err := r.Refresh(context.Background()); err == nil || s.Ready() {
		t.Errorf("a 5-entry list passed the default minimum: err=%v", err)
	}
}

func TestRefresherLocalRealList(t *testing.T) {
	src := filepath.Join(ofacDataDir(t), "full_set_2021-07", "sdn.csv")
	s := NewScreener(nil)
	r, err := NewRefresher(s, RefresherConfig{URLs: []string{"file://" + src}, CacheDir: t.TempDir(),
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	if s.List().Len() != 8976 {
		t.Errorf("entries = %d", s.List().Len())
	}
}

func TestRefresherConfigErrors(t *testing.T) {
	for _, urls := range [][]string{{"https://example.test/unknown.csv"}, {"https://example.test/alt.csv"}, {"a/sdn.csv", "b/SDN.CSV"}} {
		if _, err := NewRefresher(NewScreener(nil), RefresherConfig{URLs: urls, CacheDir: t.TempDir()}); err == nil {
			t.Errorf("URLs %q accepted", urls)
		}
	}
	if _, err := NewRefresher(NewScreener(nil), RefresherConfig{}); err == nil {
		t.Error("no cache dir accepted")
	}
}

// metricValue reads a counter or gauge (prometheus/testutil needs a module this repository does not carry).
func metricValue(t *testing.T, m prometheus.Metric) float64 {
	t.Helper()
	var d dto.Metric
	if err := m.Write(&d); err != nil {
		t.Fatal(err)
	}
	switch {
	case d.Counter != nil:
		return d.Counter.GetValue()
	case d.Gauge != nil:
		return d.Gauge.GetValue()
	}
	t.Fatal("not a counter or gauge")
	return 0
}
