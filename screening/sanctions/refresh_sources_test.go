package sanctions

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// lastModifiedServer serves files with Last-Modified only (no ETag), answering If-Modified-Since with 304
// when the file has not changed since, and without Content-Length (chunked), as some mirrors do.
type lastModifiedServer struct {
	mu       sync.Mutex
	files    map[string][]byte
	modified map[string]time.Time
	asked    map[string][]string // file -> If-Modified-Since values received
}

func (s *lastModifiedServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	name := strings.ToLower(filepath.Base(r.URL.Path))
	body, ok := s.files[name]
	if !ok {
		http.NotFound(w, r)
		return
	}
	ims := r.Header.Get("If-Modified-Since")
	s.asked[name] = append(s.asked[name], ims)
	if t, err := http.ParseTime(ims); err == nil && !s.modified[name].After(t) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	w.Header().Set("Last-Modified", s.modified[name].UTC().Format(http.TimeFormat))
	w.WriteHeader(http.StatusOK)
	w.(http.Flusher).Flush() // headers out before the body: no Content-Length
	w.Write(body)
}

// TestRefresherIfModifiedSince: a server without ETags is asked with If-Modified-Since; a file that did not
// change is reused from the cache while a changed one is downloaded, and the list is rebuilt from both. The
// download progress ends with a done == total report although no size was announced.
func TestRefresherIfModifiedSince(t *testing.T) {
	t0 := time.Date(2024, 5, 2, 18, 0, 0, 0, time.UTC)
	srv := &lastModifiedServer{
		files:    map[string][]byte{"sdn.csv": readFixture(t, "sdn.csv"), "alt.csv": readFixture(t, "alt.csv")},
		modified: map[string]time.Time{"sdn.csv": t0, "alt.csv": t0},
		asked:    map[string][]string{},
	}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	var reports []progressReport
	s := NewScreener(nil)
	r, err := NewRefresher(s, RefresherConfig{
		URLs: []string{ts.URL + "/SDN.CSV", ts.URL + "/ALT.CSV"}, CacheDir: t.TempDir(), MinEntries: 4, Logger: quietLogger(),
		Progress: func(file string, done, total int64) { reports = append(reports, progressReport{file, done, total}) },
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := r.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if s.List().Len() != 5 || !s.DataAsOf().Equal(t0) {
		t.Fatalf("first refresh: %d entries as of %v", s.List().Len(), s.DataAsOf())
	}
	sdnSize := int64(len(srv.files["sdn.csv"]))
	if last := reports[len(reports)-1]; len(reports) < 2 || last.file != "alt.csv" || last.done != last.total ||
		!containsReport(reports, "sdn.csv", sdnSize, sdnSize) {
		t.Errorf("progress reports %v: want a final done == total report per file", reports)
	}

	// Unchanged: both conditional, both 304, nothing rebuilt.
	first := s.List()
	if err := r.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if s.List() != first {
		t.Error("an unchanged list was rebuilt")
	}
	for _, f := range []string{"sdn.csv", "alt.csv"} {
		if got := srv.asked[f]; len(got) != 2 || got[1] != t0.Format(http.TimeFormat) {
			t.Errorf("%s: If-Modified-Since sent %q, want none then %q", f, got, t0.Format(http.TimeFormat))
		}
	}

	// sdn.csv changes, alt.csv does not: alt.csv comes from the cache, and its aliases stay joined.
	t1 := t0.Add(24 * time.Hour)
	srv.mu.Lock()
	srv.files["sdn.csv"] = append(append([]byte{}, strings.TrimRight(string(srv.files["sdn.csv"]), "\x1a")...),
		`3001,"NEW ENTRY LTD",-0- ,"SDGT",-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,-0- `+"\r\n\x1a"...)
	srv.modified["sdn.csv"] = t1
	srv.mu.Unlock()
	if err := r.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	l := s.List()
	if l.Len() != 6 || !l.DataAsOf().Equal(t1) {
		t.Fatalf("after sdn.csv changed: %d entries as of %v", l.Len(), l.DataAsOf())
	}
	if r := l.ScreenName("Aero-Caribbean"); len(r.Exact) != 1 || r.Exact[0].UID != 36 {
		t.Errorf("alias from the reused alt.csv lost: %+v", r)
	}
}

type progressReport struct {
	file        string
	done, total int64
}

func containsReport(rs []progressReport, file string, done, total int64) bool {
	for _, r := range rs {
		if r.file == file && r.done == done && r.total == total {
			return true
		}
	}
	return false
}

// xmlWithCount is the real SDN.XML excerpt with its Record_Count set to n.
func xmlWithCount(t *testing.T, n string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(ofacDataDir(t), "sdn_xml_excerpt_2020-10-29", "sdn.xml"))
	if err != nil {
		t.Fatal(err)
	}
	out := strings.Replace(string(b), "<Record_Count>8497</Record_Count>", "<Record_Count>"+n+"</Record_Count>", 1)
	if out == string(b) {
		t.Fatal("excerpt has no Record_Count 8497")
	}
	return []byte(out)
}

// TestRefresherXML: an SDN.XML source gives data_as_of from its Publish_Date, not from the server's
// Last-Modified; an XML file holding fewer entries than its Record_Count (the real excerpt: 2 of 8,497) is
// refused as cut.
func TestRefresherXML(t *testing.T) {
	srv := &listServer{}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	s := NewScreener(nil)
	reg := prometheus.NewRegistry()
	r, err := NewRefresher(s, RefresherConfig{URLs: []string{ts.URL + "/exports/SDN.XML"}, CacheDir: t.TempDir(),
		MinEntries: 1, Logger: quietLogger(), Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	lastModified := time.Date(2020, 10, 30, 9, 0, 0, 0, time.UTC)
	raw, err := os.ReadFile(filepath.Join(ofacDataDir(t), "sdn_xml_excerpt_2020-10-29", "sdn.xml"))
	if err != nil {
		t.Fatal(err)
	}
	srv.set(map[string][]byte{"sdn.xml": raw}, `"cut"`, lastModified)
	if err := r.Refresh(context.Background()); err == nil || !strings.Contains(err.Error(), "states 8497 records but holds 2") || s.Ready() {
		t.Fatalf("cut XML: err %v, ready %v", err, s.Ready())
	}
	srv.set(map[string][]byte{"sdn.xml": xmlWithCount(t, "2")}, `"whole"`, lastModified)
	if err := r.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	if want := time.Date(2020, 10, 29, 0, 0, 0, 0, time.UTC); !s.DataAsOf().Equal(want) || s.List().Len() != 2 {
		t.Errorf("data_as_of %v with %d entries, want the Publish_Date %v", s.DataAsOf(), s.List().Len(), want)
	}
	if h := r.Health(); !h.DataAsOf.Equal(s.DataAsOf()) || h.Entries != 2 || h.ConsecutiveFailures != 0 {
		t.Errorf("health %+v", h)
	}
	if got := gaugeValue(t, reg, "payguard_sanctions_data_as_of_timestamp_seconds"); got != float64(s.DataAsOf().Unix()) {
		t.Errorf("data_as_of gauge %v", got)
	}
	if got := s.List().DataAsOfSource(); got != AsOfPublishDate {
		t.Errorf("data_as_of source %q, want %q (the XML states its publish date)", got, AsOfPublishDate)
	}
}

// TestRefresherLocalDirectory: a local directory source (an air-gapped drop folder) stands for the OFAC
// files in it. The list is as of sdn.csv's modification time, an unchanged folder is not reloaded, and a
// changed file, a file removed or an emptied sdn.csv are noticed.
func TestRefresherLocalDirectory(t *testing.T) {
	drop := t.TempDir()
	for _, f := range []string{"sdn.csv", "alt.csv"} {
		if err := os.WriteFile(filepath.Join(drop, strings.ToUpper(f)), readFixture(t, f), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t0 := time.Date(2024, 5, 3, 18, 43, 23, 0, time.UTC)
	if err := os.Chtimes(filepath.Join(drop, "SDN.CSV"), t0, t0); err != nil {
		t.Fatal(err)
	}
	s := NewScreener(nil)
	reg := prometheus.NewRegistry()
	r, err := NewRefresher(s, RefresherConfig{URLs: []string{drop}, CacheDir: t.TempDir(), MinEntries: 4,
		Logger: quietLogger(), Registerer: reg, Now: func() time.Time { return t0.Add(72 * time.Hour) }})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := r.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	first := s.List()
	if first.Len() != 5 || !first.DataAsOf().Equal(t0) || len(first.ScreenName("Aero-Caribbean").Exact) != 1 {
		t.Fatalf("from the folder: %d entries as of %v", first.Len(), first.DataAsOf())
	}
	if err := r.Refresh(ctx); err != nil || s.List() != first {
		t.Fatalf("unchanged folder: err %v, reloaded %v", err, s.List() != first)
	}
	if got := metricValue(t, r.m.refreshes.WithLabelValues("not_modified")); got != 1 {
		t.Errorf("not_modified count %v", got)
	}

	// alt.csv removed: the aliases go with it.
	if err := os.Remove(filepath.Join(drop, "ALT.CSV")); err != nil {
		t.Fatal(err)
	}
	if err := r.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if l := s.List(); l == first || len(l.ScreenName("Aero-Caribbean").Exact) != 0 {
		t.Error("a file removed from the folder was not noticed")
	}

	// sdn.csv emptied (a failed copy into the folder): refused, the list keeps serving.
	served := s.List()
	if err := os.WriteFile(filepath.Join(drop, "SDN.CSV"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := r.Refresh(ctx); err == nil || !strings.Contains(err.Error(), "empty file") || s.List() != served {
		t.Errorf("emptied sdn.csv: err %v, replaced %v", err, s.List() != served)
	}
	if h := r.Health(); h.ConsecutiveFailures != 1 || h.Entries != 5 {
		t.Errorf("health %+v", h)
	}

	// A folder without sdn.csv or sdn.xml, and a path that is neither a file nor a folder.
	if err := os.Remove(filepath.Join(drop, "SDN.CSV")); err != nil {
		t.Fatal(err)
	}
	if err := r.Refresh(ctx); err == nil || !strings.Contains(err.Error(), "neither sdn.csv nor sdn.xml") {
		t.Errorf("folder without sdn.csv: err %v", err)
	}
	if _, err := NewRefresher(NewScreener(nil), RefresherConfig{URLs: []string{filepath.Join(drop, "missing")}, CacheDir: t.TempDir()}); err == nil {
		t.Error("a missing folder was accepted")
	}
}

// TestRefresherDuplicateAcrossSources: a file named by a URL and also present in a folder source is refused
// rather than silently picking one.
func TestRefresherDuplicateAcrossSources(t *testing.T) {
	drop := t.TempDir()
	if err := os.WriteFile(filepath.Join(drop, "sdn.csv"), readFixture(t, "sdn.csv"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := NewScreener(nil)
	r, err := NewRefresher(s, RefresherConfig{URLs: []string{drop, "testdata/basic/sdn.csv"}, CacheDir: t.TempDir(), MinEntries: 4, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Refresh(context.Background()); err == nil || !strings.Contains(err.Error(), "comes from both") || s.Ready() {
		t.Errorf("err %v ready %v", err, s.Ready())
	}
}
