package bolt

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"go.etcd.io/bbolt"
)

// mappedKB is the resident size (smaps "Rss:") of this process's mappings of path.
func mappedKB(t *testing.T, path string) int {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skip("no /proc/self/smaps:", err)
	}
	defer f.Close()
	total, in := 0, false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if fields := strings.Fields(line); len(fields) >= 5 && strings.Contains(fields[0], "-") && !strings.HasSuffix(fields[0], ":") {
			in = len(fields) >= 6 && fields[5] == path
			continue
		}
		if v, ok := strings.CutPrefix(line, "Rss:"); in && ok {
			n, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			total += n
		}
	}
	return total
}

// The pages of the file a transaction read stay resident in the process until dropMapped lets them go
// (issue 36: they were most of the proxy's RSS growth); the data is still there after it.
func TestDropMappedReleasesTheFilesPages(t *testing.T) {
	path := filepath.Join(t.TempDir(), "payguard.db")
	s := openLog(t, path)
	defer s.Close()
	val := make([]byte, 1000)
	if err := s.db.Update(func(tx *bbolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists([]byte("maptest"))
		if err != nil {
			return err
		}
		for i := range 8000 {
			if err := b.Put(fmt.Appendf(nil, "%08d", i), val); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	readAll := func() (n int) {
		s.db.View(func(tx *bbolt.Tx) error {
			return tx.Bucket([]byte("maptest")).ForEach(func(k, v []byte) error { n += len(v); return nil })
		})
		return n
	}
	readAll()
	before := mappedKB(t, path)
	if before < 4000 {
		t.Fatalf("%d kB of the file resident after reading 8 MB of it", before)
	}
	s.dropMapped()
	if after := mappedKB(t, path); after > 64 {
		t.Fatalf("%d kB of the file resident after dropMapped (before: %d)", after, before)
	}
	if n := readAll(); n != 8000*len(val) {
		t.Fatalf("read %d bytes after dropMapped", n)
	}
}
