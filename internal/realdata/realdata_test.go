package realdata

import (
	"os"
	"path/filepath"
	"testing"
)

// TestExtract: every compressed file comes out under the same relative path without its .gz, and a second
// call returns the same folder (the cache is keyed by the compressed bytes).
func TestExtract(t *testing.T) {
	dir := OFACDir(t)
	t.Logf("OFAC test data decompressed at %s", dir)
	for _, rel := range []string{
		"PROVENANCE.md",
		"sdn_csv_2024-05-03/sdn.csv",
		"full_set_2021-07/sdn_comments.csv",
		"sdn_xml_excerpt_2020-10-29/sdn.xml",
		"crypto_addresses_from_sdn_advanced_2024-05-02/sanctioned_addresses_ETH.txt",
	} {
		if fi, err := os.Stat(filepath.Join(dir, rel)); err != nil || fi.Size() == 0 {
			t.Errorf("%s: %v", rel, err)
		}
	}
	// 3,909,739 bytes as PROVENANCE.md records for the 2024-05-03 sdn.csv.
	if fi, err := os.Stat(filepath.Join(dir, "sdn_csv_2024-05-03", "sdn.csv")); err != nil {
		t.Error(err)
	} else if fi.Size() != 3909739 {
		t.Errorf("sdn_csv_2024-05-03/sdn.csv: %d bytes, want 3909739", fi.Size())
	}
	fresh, err := extract(Source())
	if err != nil || fresh != dir {
		t.Errorf("second extract = %q, %v; want the cached %q", fresh, err, dir)
	}
}
