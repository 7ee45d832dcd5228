package sanctions

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"
)

// ofacDataDir locates the shared real OFAC data: <repo root>/../shared/data/ofac. It fails (never skips)
// when the data is missing, because these tests are the evidence that the loader handles the real files.
func ofacDataDir(t testing.TB) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	repoRoot := filepath.Join(filepath.Dir(file), "..", "..")
	dir := filepath.Join(repoRoot, "..", "shared", "data", "ofac")
	if _, err := os.Stat(filepath.Join(dir, "PROVENANCE.md")); err != nil {
		t.Fatalf("real OFAC data not found at %s (expected the shared/ folder beside the repository): %v", dir, err)
	}
	return dir
}

var (
	fullListOnce sync.Once
	fullList     *List
	fullListErr  error
)

// loadFullList is the benchmark list: sdn.csv of 2024-05-03 with the 2025-12 alt.csv joined by uid (rows
// whose uid is not in that sdn.csv are dropped), loaded once per test binary. It reads the gzip copies in
// testdata/ofac (byte-for-byte copies of the shared real files; testdata/ofac/README.md).
func loadFullList(t testing.TB) *List {
	t.Helper()
	fullListOnce.Do(func() {
		sdn, err := gunzipFile(filepath.Join("testdata", "ofac", "sdn_2024-05-03.csv.gz"))
		if err != nil {
			fullListErr = err
			return
		}
		alt, err := gunzipFile(filepath.Join("testdata", "ofac", "alt_2025-12.csv.gz"))
		if err != nil {
			fullListErr = err
			return
		}
		fullList, _, fullListErr = ParseCSV(CSVFiles{SDN: bytes.NewReader(sdn), Alt: bytes.NewReader(alt)}, time.Time{}, "test")
	})
	if fullListErr != nil {
		t.Fatalf("loading the full list: %v", fullListErr)
	}
	return fullList
}

// gunzipFile returns the uncompressed content of a .gz file.
func gunzipFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, err
	}
	return io.ReadAll(zr)
}
