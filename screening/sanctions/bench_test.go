package sanctions

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkLoadFullList measures parse + index of the benchmark list (2024-05-03 sdn.csv, 2025-12 alt.csv)
// from memory, so disk speed is not in the figure.
func BenchmarkLoadFullList(b *testing.B) {
	dir := ofacDataDir(b)
	sdn, err := os.ReadFile(filepath.Join(dir, "sdn_csv_2024-05-03", "sdn.csv"))
	if err != nil {
		b.Fatal(err)
	}
	alt, err := os.ReadFile(filepath.Join(dir, "alt_add_comments_2025-12", "alt.csv"))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := ParseCSV(CSVFiles{SDN: bytes.NewReader(sdn), Alt: bytes.NewReader(alt)}, time.Time{}, "bench"); err != nil {
			b.Fatal(err)
		}
	}
}
