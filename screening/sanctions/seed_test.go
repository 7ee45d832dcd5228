package sanctions

import (
	"context"
	"io"
	"log/slog"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// imageSnapshot builds the container image's OFAC snapshot with the very script the Dockerfile runs.
func imageSnapshot(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "snapshot")
	if out, err := exec.Command("sh", filepath.Join("..", "..", "docker", "sanctions-snapshot.sh"), dir).CombinedOutput(); err != nil {
		t.Fatalf("docker/sanctions-snapshot.sh: %v\n%s", err, out)
	}
	return dir
}

// A new pod's cache is empty: with a seed (the image's snapshot) the refresher serves it at once, dated by
// the snapshot's meta.json (2024-05-03, its fetch from treasury.gov, not the build's file times) and marked
// as a snapshot with no successful refresh yet; the first good refresh replaces it and is what the next
// start loads, not the seed. Without SeedDir LoadCache fails, as it did before (the pod stayed NotReady
// until the download finished).
func TestRefresherServesTheSeedUntilTheFirstRefresh(t *testing.T) {
	seed := imageSnapshot(t)
	cache := t.TempDir()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	fresh := filepath.Join(ofacDataDir(t), "sdn_csv_2024-05-02", "sdn.csv")
	newRef := func(seedDir string) (*Screener, *Refresher) {
		s := NewScreener(nil)
		r, err := NewRefresher(s, RefresherConfig{URLs: []string{"file://" + fresh}, CacheDir: cache, SeedDir: seedDir, Logger: quiet})
		if err != nil {
			t.Fatal(err)
		}
		return s, r
	}

	s, r := newRef("")
	if err := r.LoadCache(); err == nil || s.Ready() {
		t.Fatalf("without a seed an empty cache loaded: err=%v", err)
	}

	s, r = newRef(seed)
	if err := r.LoadCache(); err != nil {
		t.Fatal(err)
	}
	st := StatusOf(s, r, time.Now())
	want := time.Date(2024, 5, 3, 18, 43, 23, 0, time.UTC)
	if !s.Ready() || st.Entries != 14965 || !st.DataAsOf.Equal(want) || st.AsOfSource != AsOfFetchTime ||
		!strings.HasPrefix(st.Source, "snapshot ") || st.SourceKind != SourceSnapshot || !st.LastSuccess.IsZero() || st.AgeSeconds < int64(time.Since(want)/time.Second)-60 {
		t.Fatalf("seeded status %+v", st)
	}
	// The seed is only read: nothing was written into it, and the cache is still empty.
	if m, _ := filepath.Glob(filepath.Join(cache, "*")); len(m) != 0 {
		t.Fatalf("loading the seed wrote %v into the cache", m)
	}

	if err := r.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	st = StatusOf(s, r, time.Now())
	if st.Entries != 14973 || st.SourceKind != SourceDownload || st.LastSuccess.IsZero() {
		t.Fatalf("after the refresh: %+v", st)
	}

	s, r = newRef(seed)
	if err := r.LoadCache(); err != nil {
		t.Fatal(err)
	}
	if st := StatusOf(s, r, time.Now()); st.Entries != 14973 || st.SourceKind != SourceCache {
		t.Fatalf("a restart with a cache served %+v, want the cache", st)
	}
}

// A seed that is missing or implausibly small is an error and serves nothing (fail closed: every payment is
// held until a list loads), never an empty list.
func TestRefresherRefusesABadSeed(t *testing.T) {
	tiny := filepath.Join(t.TempDir(), "tiny")
	if out, err := exec.Command("sh", "-c", `mkdir -p "$1" && cp testdata/basic/sdn.csv "$1/"`, "sh", tiny).CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	for _, seed := range []string{filepath.Join(t.TempDir(), "absent"), tiny} {
		s := NewScreener(nil)
		r, err := NewRefresher(s, RefresherConfig{URLs: []string{"https://example.test/sdn.csv"}, CacheDir: t.TempDir(), SeedDir: seed,
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err != nil {
			t.Fatal(err)
		}
		if err := r.LoadCache(); err == nil || s.Ready() {
			t.Errorf("seed %s: loaded (err=%v)", seed, err)
		}
	}
}
