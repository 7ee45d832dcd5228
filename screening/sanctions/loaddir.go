package sanctions

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// File names of OFAC's publications, matched case-insensitively in a directory.
const (
	FileSDN      = "sdn.csv"
	FileAlt      = "alt.csv"
	FileAdd      = "add.csv"
	FileComments = "sdn_comments.csv"
	FileXML      = "sdn.xml"
)

// LoadDir loads a list from a directory holding either OFAC's CSV set (sdn.csv required; alt.csv, add.csv
// and sdn_comments.csv used when present) or SDN.XML. When both are present the XML wins, because it states
// its publish date. For the CSV set, data-as-of is the time recorded by the Refresher that fetched the files
// (meta.json) or else sdn.csv's modification time. A Refresher cache directory works too: its last good
// copy (the "current" subdirectory) is loaded.
func LoadDir(dir string) (*List, error) {
	l, _, err := LoadDirStats(dir)
	return l, err
}

// LoadDirStats is LoadDir that also returns what the load saw.
func LoadDirStats(dir string) (*List, LoadStats, error) { return loadDir(dir, true) }

func loadDir(dir string, index bool) (*List, LoadStats, error) {
	names, err := dirFiles(dir)
	if err != nil {
		return nil, LoadStats{}, err
	}
	if _, ok := names[FileSDN]; !ok {
		if _, ok := names[FileXML]; !ok {
			if fi, err := os.Stat(filepath.Join(dir, "current")); err == nil && fi.IsDir() {
				return loadDir(filepath.Join(dir, "current"), index)
			}
		}
	}
	if p, ok := names[FileXML]; ok {
		f, err := os.Open(p)
		if err != nil {
			return nil, LoadStats{}, fmt.Errorf("sanctions: %w", err)
		}
		defer f.Close()
		l, st, err := ParseXML(f, modTime(f), p)
		if err == nil && !l.fromXML() {
			l.dataAsOf, l.asOfSource = recordedAsOf(dir, l.dataAsOf)
		}
		return l, st, err
	}
	if _, ok := names[FileSDN]; !ok {
		return nil, LoadStats{}, fmt.Errorf("sanctions: %s has neither sdn.csv nor SDN.XML", dir)
	}
	var files CSVFiles
	var closers []io.Closer
	defer func() {
		for _, c := range closers {
			c.Close()
		}
	}()
	open := func(name string, dst *io.Reader) (*os.File, error) {
		p, ok := names[name]
		if !ok {
			return nil, nil
		}
		f, err := os.Open(p)
		if err != nil {
			return nil, fmt.Errorf("sanctions: %w", err)
		}
		closers = append(closers, f)
		*dst = f
		return f, nil
	}
	sdn, err := open(FileSDN, &files.SDN)
	if err != nil {
		return nil, LoadStats{}, err
	}
	for _, o := range []struct {
		name string
		dst  *io.Reader
	}{{FileAlt, &files.Alt}, {FileAdd, &files.Add}, {FileComments, &files.Comments}} {
		if _, err := open(o.name, o.dst); err != nil {
			return nil, LoadStats{}, err
		}
	}
	asOf, asOfSource := recordedAsOf(dir, modTime(sdn))
	l, st, err := parseCSV(files, asOf, dir, index)
	if err == nil {
		l.asOfSource = asOfSource
	}
	return l, st, err
}

// recordedAsOf is the data-as-of a Refresher recorded for the files in dir (meta.json: the download's
// Last-Modified or its fetch time), else mtime, the main file's modification time.
func recordedAsOf(dir string, mtime time.Time) (time.Time, string) {
	if meta, err := readMeta(dir); err == nil && !meta.DataAsOf.IsZero() {
		src := meta.DataAsOfSource
		if src == "" { // a cache written before the source was recorded
			src = AsOfFetchTime
		}
		return meta.DataAsOf, src
	}
	return mtime, AsOfFileModTime
}

// dirFiles maps the lower-case names of the OFAC files in dir to their paths.
func dirFiles(dir string) (map[string]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("sanctions: list directory %s does not exist", dir)
		}
		return nil, fmt.Errorf("sanctions: %w", err)
	}
	out := map[string]string{}
	for _, e := range ents {
		n := strings.ToLower(e.Name())
		switch n {
		case FileSDN, FileAlt, FileAdd, FileComments, FileXML:
			if e.Type().IsRegular() || e.Type()&fs.ModeSymlink != 0 {
				out[n] = filepath.Join(dir, e.Name())
			}
		}
	}
	return out, nil
}

func modTime(f *os.File) time.Time {
	fi, err := f.Stat()
	if err != nil {
		return time.Time{}
	}
	return fi.ModTime().UTC()
}
