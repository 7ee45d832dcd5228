package sanctions

import (
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/payguard/payguard/internal/realdata"
)

// ofacDataDir is the real OFAC data kept in the repository's testdata/ofac (decompressed by realdata). It
// fails (never skips) when the data is missing, because these tests are the evidence that the loader
// handles the real files.
func ofacDataDir(t testing.TB) string {
	t.Helper()
	return realdata.OFACDir(t)
}

var (
	fullListOnce sync.Once
	fullList     *List
	fullListErr  error
)

// loadFullList is the benchmark list: sdn.csv of 2024-05-03 with the 2025-12 alt.csv joined by uid (rows
// whose uid is not in that sdn.csv are dropped), loaded once per test binary.
func loadFullList(t testing.TB) *List {
	t.Helper()
	dir := ofacDataDir(t)
	fullListOnce.Do(func() {
		sdn, err := os.Open(filepath.Join(dir, "sdn_csv_2024-05-03", "sdn.csv"))
		if err != nil {
			fullListErr = err
			return
		}
		defer sdn.Close()
		alt, err := os.Open(filepath.Join(dir, "alt_add_comments_2025-12", "alt.csv"))
		if err != nil {
			fullListErr = err
			return
		}
		defer alt.Close()
		fullList, _, fullListErr = ParseCSV(CSVFiles{SDN: sdn, Alt: alt}, modTime(sdn), "test")
	})
	if fullListErr != nil {
		t.Fatalf("loading the full list: %v", fullListErr)
	}
	return fullList
}
