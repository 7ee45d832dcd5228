// Package realdata gives tests the real OFAC files kept, gzip-compressed, in the repository's
// testdata/ofac (see testdata/README.md for where each came from). The loaders under test read plain
// files, as an operator's --sanctions-dir holds them, so OFACDir decompresses the set once into a cache
// folder named after the compressed bytes' hash and returns that folder. Tests never read anything
// outside the repository: a fresh clone runs them with nothing beside it.
package realdata

import (
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
)

var (
	once   sync.Once
	dir    string
	dirErr error
)

// OFACDir returns a folder with the same layout as testdata/ofac, every file decompressed (sdn_csv_2024-05-03/sdn.csv,
// full_set_2021-07/{sdn,alt,add,sdn_comments}.csv, ...). It fails the test, never skips it: these tests are the
// evidence that the loaders handle the real files.
func OFACDir(tb testing.TB) string {
	tb.Helper()
	d, err := Extract()
	if err != nil {
		tb.Fatalf("real OFAC test data: %v", err)
	}
	return d
}

// Extract is OFACDir for code without a testing.TB (a test binary's child process).
func Extract() (string, error) {
	once.Do(func() { dir, dirErr = extract(Source()) })
	return dir, dirErr
}

// Source is the repository's testdata/ofac folder (compressed files and PROVENANCE.md).
func Source() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "testdata", "ofac")
}

// extract decompresses src into <tmp>/payguard-ofac-<hash>, where the hash covers every file's path and
// bytes, so a changed file gets a new folder and concurrent test binaries never see a half-written one
// (each writes its own temporary folder and renames it into place).
func extract(src string) (string, error) {
	var files []string
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, p)
		}
		return err
	})
	if err != nil {
		return "", err
	}
	if len(files) == 0 {
		return "", fmt.Errorf("no files under %s", src)
	}
	sort.Strings(files)
	h := sha256.New()
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return "", err
		}
		rel, _ := filepath.Rel(src, f)
		fmt.Fprintf(h, "%s\x00%d\x00", filepath.ToSlash(rel), len(b))
		h.Write(b)
	}
	final := filepath.Join(os.TempDir(), "payguard-ofac-"+hex.EncodeToString(h.Sum(nil))[:16])
	if _, err := os.Stat(filepath.Join(final, "PROVENANCE.md")); err == nil {
		return final, nil
	}
	work, err := os.MkdirTemp(os.TempDir(), "payguard-ofac-work-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(work) // gone after a successful rename; cleans up after a failure
	for _, f := range files {
		rel, _ := filepath.Rel(src, f)
		if err := copyFile(f, filepath.Join(work, strings.TrimSuffix(rel, ".gz")), strings.HasSuffix(f, ".gz")); err != nil {
			return "", fmt.Errorf("%s: %w", rel, err)
		}
	}
	if err := os.Rename(work, final); err != nil {
		// Another test binary won the race: its folder holds the same bytes.
		if _, statErr := os.Stat(filepath.Join(final, "PROVENANCE.md")); statErr == nil {
			return final, nil
		}
		return "", err
	}
	return final, nil
}

func copyFile(src, dst string, gunzip bool) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	var r io.Reader = in
	if gunzip {
		zr, err := gzip.NewReader(in)
		if err != nil {
			return err
		}
		defer zr.Close()
		r = zr
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, r); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
