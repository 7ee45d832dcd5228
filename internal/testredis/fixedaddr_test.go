package testredis

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// fixedRedis matches a Redis address written into a test: the default port on any host. A test that dials one
// itself passes on a machine that runs Redis there and fails on a fresh one (issue 31): every test that needs a
// Redis asks this package (URL, Get, StartOwn), whose fallback works with nothing installed.
var fixedRedis = regexp.MustCompile(`:6379\b`)

// notDialed is the mark a line carries when the address is only text a test parses (a config value, a bad
// URL refused before any dial), never an address it connects to.
const notDialed = "// not dialed"

// TestNoTestDialsAFixedRedis reads every test file in the repository (Go and the interop and guard suites)
// and refuses a fixed Redis address outside this package unless the line says it is never dialed.
func TestNoTestDialsAFixedRedis(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("repository root not found from %s: %v", root, err)
	}
	own := filepath.Join(root, "internal", "testredis")
	var scanned int
	err = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case "node_modules", ".venv", ".git", "testdata":
				return filepath.SkipDir
			}
			if path == own {
				return filepath.SkipDir
			}
			return nil
		}
		if !isTestFile(path) {
			return nil
		}
		scanned++
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
		for n := 1; sc.Scan(); n++ {
			line := sc.Text()
			if fixedRedis.MatchString(line) && !strings.Contains(line, notDialed) && !isComment(line) {
				rel, _ := filepath.Rel(root, path)
				t.Errorf("%s:%d names a fixed Redis address; use testredis.URL(t) (or mark a parse-only value %q): %s",
					rel, n, notDialed, strings.TrimSpace(line))
			}
		}
		return sc.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	if scanned < 50 {
		t.Fatalf("only %d test files found under %s: the walk is broken", scanned, root)
	}
}

func isTestFile(path string) bool {
	base := filepath.Base(path)
	dir := filepath.ToSlash(filepath.Dir(path))
	switch {
	case strings.HasSuffix(base, "_test.go"):
		return true
	case strings.HasSuffix(base, ".test.mjs"), strings.HasSuffix(base, ".test.js"):
		return true
	case strings.HasPrefix(base, "test_") && strings.HasSuffix(base, ".py"):
		return true
	case strings.Contains(dir, "/interop/lib") || strings.Contains(dir, "/tests/"):
		return strings.HasSuffix(base, ".mjs") || strings.HasSuffix(base, ".py")
	}
	return false
}

func isComment(line string) bool {
	s := strings.TrimSpace(line)
	return strings.HasPrefix(s, "//") || strings.HasPrefix(s, "#") || strings.HasPrefix(s, "*")
}
