package sanctions

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// copyDir copies the regular files of src into a new directory, as an operator copying a list would: the
// copies' modification times are now.
func copyDir(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if !e.Type().IsRegular() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// data_as_of is the list's publication date where the source carries one, and the list says which date it
// is: SDN.XML's Publish_Date; for the CSV set a download's Last-Modified, kept through a copy of the cache;
// a CSV set given by hand has only its files' modification time, and says so.
func TestDataAsOfSource(t *testing.T) {
	// XML: the publish date, whatever the file's time.
	xmlDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(xmlDir, "sdn.xml"), xmlWithCount(t, "2"), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := LoadDir(xmlDir)
	if err != nil {
		t.Fatal(err)
	}
	if want := time.Date(2020, 10, 29, 0, 0, 0, 0, time.UTC); !l.DataAsOf().Equal(want) || l.DataAsOfSource() != AsOfPublishDate {
		t.Errorf("XML: %v (%s), want %v (publish_date)", l.DataAsOf(), l.DataAsOfSource(), want)
	}

	// CSV downloaded: the server's Last-Modified, also after the cache is copied elsewhere.
	srv := &listServer{}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	published := time.Date(2026, 11, 20, 17, 5, 0, 0, time.UTC)
	srv.set(map[string][]byte{"sdn.csv": readFixture(t, "sdn.csv")}, `"v1"`, published)
	cache := t.TempDir()
	s := NewScreener(nil)
	r, err := NewRefresher(s, RefresherConfig{URLs: []string{ts.URL + "/SDN.CSV"}, CacheDir: cache, MinEntries: 4,
		Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !s.DataAsOf().Equal(published) || s.DataAsOfSource() != AsOfLastModified {
		t.Errorf("downloaded: %v (%s), want %v (http_last_modified)", s.DataAsOf(), s.DataAsOfSource(), published)
	}
	copied := copyDir(t, filepath.Join(cache, "current"))
	if l, err = LoadDir(copied); err != nil {
		t.Fatal(err)
	}
	if !l.DataAsOf().Equal(published) || l.DataAsOfSource() != AsOfLastModified {
		t.Errorf("copied cache: %v (%s), want %v (http_last_modified), not the copy's time", l.DataAsOf(), l.DataAsOfSource(), published)
	}

	// CSV by hand: only the file's time exists, and the list says that is what it is.
	hand := t.TempDir()
	if err := os.WriteFile(filepath.Join(hand, "sdn.csv"), readFixture(t, "sdn.csv"), 0o644); err != nil {
		t.Fatal(err)
	}
	if l, err = LoadDir(hand); err != nil {
		t.Fatal(err)
	}
	if l.DataAsOfSource() != AsOfFileModTime || time.Since(l.DataAsOf()) > time.Hour {
		t.Errorf("hand-copied CSV: %v (%s), want its file time (file_mtime)", l.DataAsOf(), l.DataAsOfSource())
	}
	if !strings.HasPrefix(StatusOf(s, r, time.Now()).AsOfSource, "http_") {
		t.Errorf("status does not carry the source: %+v", StatusOf(s, r, time.Now()))
	}

	// CSV fetched from a local path (`payguard sdn update --url DIR`): the file's time, said as file_mtime,
	// not as a server's Last-Modified (it was before).
	local := t.TempDir()
	fileTime := time.Date(2026, 10, 1, 12, 0, 0, 0, time.UTC)
	if err := os.WriteFile(filepath.Join(local, "sdn.csv"), readFixture(t, "sdn.csv"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(filepath.Join(local, "sdn.csv"), fileTime, fileTime); err != nil {
		t.Fatal(err)
	}
	s2 := NewScreener(nil)
	r2, err := NewRefresher(s2, RefresherConfig{URLs: []string{local}, CacheDir: t.TempDir(), MinEntries: 4, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	if err := r2.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !s2.DataAsOf().Equal(fileTime) || s2.DataAsOfSource() != AsOfFileModTime {
		t.Errorf("local source: %v (%s), want %v (file_mtime)", s2.DataAsOf(), s2.DataAsOfSource(), fileTime)
	}
}
