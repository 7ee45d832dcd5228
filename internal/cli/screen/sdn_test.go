package screen

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

const sdnFixtureDir = "../../../screening/sanctions/testdata/basic"

func TestSDNStats(t *testing.T) {
	code, out, errs := runPG(t, "", "sdn", "stats", "--sanctions-dir", sdnFixtureDir)
	if code != 0 || !strings.Contains(out, "entries:     5") || !strings.Contains(out, "XBT          1") {
		t.Fatalf("text stats: code %d\n%s\n%s", code, out, errs)
	}
	code, out, errs = runPG(t, "", "sdn", "stats", "--sanctions-dir", sdnFixtureDir, "--json")
	if code != 0 {
		t.Fatalf("json stats: code %d: %s", code, errs)
	}
	var st sdnStats
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatal(err)
	}
	if st.Entries != 5 || st.EntriesByType["individual"] != 1 || st.EntriesByType["vessel"] != 1 || st.Aliases != 3 ||
		st.WeakAliases != 1 || st.Addresses != 4 || st.AddressesByCurrency["USDT"] != 1 || st.DataAsOf.IsZero() {
		t.Errorf("stats = %+v", st)
	}
	if code, _, _ := runPG(t, "", "sdn", "stats", "--sanctions-dir", filepath.Join(t.TempDir(), "none")); code != 1 {
		t.Errorf("missing dir: code %d, want 1", code)
	}
	for _, args := range [][]string{{"sdn"}, {"sdn", "frob"}, {"sdn", "stats", "extra"}, {"sdn", "update", "--nope"}} {
		if code, _, _ := runPG(t, "", args...); code != 2 {
			t.Errorf("%q: code %d, want 2", args, code)
		}
	}
}

func TestSDNUpdate(t *testing.T) {
	sdn, err := os.ReadFile(filepath.Join(sdnFixtureDir, "sdn.csv"))
	if err != nil {
		t.Fatal(err)
	}
	var fail atomic.Bool
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if fail.Load() {
			w.WriteHeader(http.StatusBadGateway)
			return
		}
		if r.Header.Get("If-None-Match") == `"a"` {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("ETag", `"a"`)
		w.Write(sdn)
	}))
	defer ts.Close()
	cache := t.TempDir()
	args := []string{"sdn", "update", "--dir", cache, "--url", ts.URL + "/SDN.CSV", "--min-entries", "3", "--progress"}
	code, out, errs := runPG(t, "", args...)
	progressDone := fmt.Sprintf("\rsdn.csv: %d/%d bytes (100%%)\n", len(sdn), len(sdn))
	if code != 0 || !strings.HasPrefix(out, "updated: 5 entries, 4 addresses") || !strings.HasSuffix(errs, progressDone) {
		t.Fatalf("first update: code %d\nstdout %s\nstderr %q, want it to end with %q", code, out, errs, progressDone)
	}
	code, out, _ = runPG(t, "", args...)
	if code != 0 || !strings.HasPrefix(out, "not modified: 5 entries") {
		t.Errorf("second update: code %d: %s", code, out)
	}
	fail.Store(true)
	code, _, errs = runPG(t, "", args...)
	if code != 1 || !strings.Contains(errs, "502") {
		t.Errorf("failing server: code %d: %s", code, errs)
	}
	// The cache still holds the good copy, and stats reads it.
	code, out, _ = runPG(t, "", "sdn", "stats", "--sanctions-dir", cache)
	if code != 0 || !strings.Contains(out, "entries:     5") {
		t.Errorf("stats of the cache: code %d: %s", code, out)
	}
}

// TestSDNUpdateFromDirectory: an air-gapped site points --url at a folder holding the day's files.
func TestSDNUpdateFromDirectory(t *testing.T) {
	cache := t.TempDir()
	args := []string{"sdn", "update", "--dir", cache, "--url", sdnFixtureDir, "--min-entries", "3"}
	code, out, errs := runPG(t, "", args...)
	if code != 0 || !strings.HasPrefix(out, "updated: 5 entries, 4 addresses") {
		t.Fatalf("first update: code %d\nstdout %s\nstderr %s", code, out, errs)
	}
	// Files copied by hand carry no publication date: the update says so, not only "(file_mtime)".
	if !strings.Contains(errs, "warning: data_as_of is the list files' modification time") {
		t.Errorf("no warning about the file date: %s", errs)
	}
	if code, out, errs = runPG(t, "", args...); code != 0 || !strings.HasPrefix(out, "not modified: 5 entries") {
		t.Errorf("second update: code %d: %s %s", code, out, errs)
	}
	code, out, _ = runPG(t, "", "sdn", "stats", "--sanctions-dir", cache, "--json")
	var st sdnStats
	if err := json.Unmarshal([]byte(out), &st); code != 0 || err != nil || st.Entries != 5 || st.Aliases != 3 {
		t.Errorf("stats of the cache: code %d %v %+v", code, err, st)
	}
	if code, _, errs := runPG(t, "", "sdn", "update", "--dir", t.TempDir(), "--url", filepath.Join(t.TempDir(), "nope")); code != 2 || !strings.Contains(errs, "nor a local directory") {
		t.Errorf("missing folder: code %d: %s", code, errs)
	}
}
