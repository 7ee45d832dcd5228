package sanctions

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// source is one configured refresh source: a URL or path naming one OFAC file, or a local directory whose
// OFAC files are all taken (an air-gapped site drops the day's files into it).
type source struct {
	raw  string
	name string // the OFAC file it names; "" for a directory
	dir  string // the local directory, for a directory source
}

// parseSource reads one RefresherConfig.URLs element.
func parseSource(raw string) (source, error) {
	if name, err := fileNameOf(raw); err == nil {
		return source{raw: raw, name: name}, nil
	}
	if p, local := localPath(raw); local {
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			return source{raw: raw, dir: p}, nil
		}
	}
	return source{}, fmt.Errorf("sanctions: %q names neither an OFAC file (sdn.csv, alt.csv, add.csv, sdn_comments.csv or sdn.xml) nor a local directory", raw)
}

// remoteFile is one file to fetch in a refresh.
type remoteFile struct{ url, name string }

// expand lists the files the sources name, reading directory sources now. A file named twice is an error,
// and so is a set without sdn.csv or sdn.xml.
func expand(sources []source) ([]remoteFile, error) {
	var out []remoteFile
	seen := map[string]string{}
	add := func(url, name string) error {
		if prev, dup := seen[name]; dup {
			return fmt.Errorf("sanctions: %s comes from both %s and %s", name, prev, url)
		}
		seen[name] = url
		out = append(out, remoteFile{url: url, name: name})
		return nil
	}
	for _, s := range sources {
		if s.dir == "" {
			if err := add(s.raw, s.name); err != nil {
				return nil, err
			}
			continue
		}
		files, err := dirFiles(s.dir)
		if err != nil {
			return nil, err
		}
		names := make([]string, 0, len(files))
		for n := range files {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			if err := add(files[n], n); err != nil {
				return nil, err
			}
		}
	}
	if seen[FileSDN] == "" && seen[FileXML] == "" {
		return nil, errors.New("sanctions: the refresh sources hold neither sdn.csv nor sdn.xml")
	}
	return out, nil
}

// localPath reports whether raw is a local file (a plain path or a file:// URL) and returns its path.
func localPath(raw string) (string, bool) {
	u, err := url.Parse(raw)
	switch {
	case err != nil || u.Scheme == "" || len(u.Scheme) == 1: // a Windows drive letter is not a scheme
		return raw, true
	case u.Scheme == "file":
		return u.Path, true
	}
	return "", false
}

// fetch gets one file into dst. With a previous copy it asks conditionally (If-None-Match /
// If-Modified-Since) and reports notModified on 304; a local file is not modified when its size and
// modification time are those of the previous copy.
func (r *Refresher) fetch(ctx context.Context, rawURL, name, dst string, prev cacheFile, havePrev bool) (cacheFile, bool, error) {
	if src, local := localPath(rawURL); local {
		return r.copyLocal(rawURL, src, name, dst, prev, havePrev)
	}
	out := cacheFile{URL: rawURL}
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return out, false, fmt.Errorf("sanctions: %q is neither an http(s) URL nor a local file", rawURL)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return out, false, fmt.Errorf("sanctions: %w", err)
	}
	if havePrev {
		if prev.ETag != "" {
			req.Header.Set("If-None-Match", prev.ETag)
		}
		if prev.LastModified != "" {
			req.Header.Set("If-Modified-Since", prev.LastModified)
		}
	}
	resp, err := r.cfg.Client.Do(req)
	if err != nil {
		return out, false, fmt.Errorf("sanctions: downloading %s: %w", name, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotModified && havePrev {
		return prev, true, nil
	}
	if resp.StatusCode != http.StatusOK {
		return out, false, fmt.Errorf("sanctions: downloading %s: HTTP %s", name, resp.Status)
	}
	f, err := os.Create(dst)
	if err != nil {
		return out, false, fmt.Errorf("sanctions: %w", err)
	}
	defer f.Close()
	var w io.Writer = f
	if r.cfg.Progress != nil {
		w = &progressWriter{w: f, name: name, total: resp.ContentLength, report: r.cfg.Progress}
	}
	n, err := io.Copy(w, io.LimitReader(resp.Body, maxDownloadBytes+1))
	if err != nil {
		return out, false, fmt.Errorf("sanctions: downloading %s: %w", name, err)
	}
	if n > maxDownloadBytes {
		return out, false, fmt.Errorf("sanctions: %s is larger than %d bytes", name, maxDownloadBytes)
	}
	if resp.ContentLength >= 0 && n != resp.ContentLength {
		return out, false, fmt.Errorf("sanctions: %s: got %d of %d bytes", name, n, resp.ContentLength)
	}
	if n == 0 {
		return out, false, fmt.Errorf("sanctions: %s: empty download", name)
	}
	if err := f.Close(); err != nil {
		return out, false, fmt.Errorf("sanctions: %w", err)
	}
	if r.cfg.Progress != nil {
		r.cfg.Progress(name, n, n) // the final report: done == total, also when the size was not announced
	}
	out.ETag = resp.Header.Get("ETag")
	out.LastModified = resp.Header.Get("Last-Modified")
	return out, false, nil
}

// copyLocal copies a local file into dst. Its modification time stands in for Last-Modified (so a CSV
// list's data_as_of is when the file was written, not when it was copied), and size plus modification time
// for an ETag.
func (r *Refresher) copyLocal(rawURL, src, name, dst string, prev cacheFile, havePrev bool) (cacheFile, bool, error) {
	out := cacheFile{URL: rawURL}
	fi, err := os.Stat(src)
	if err != nil {
		return out, false, fmt.Errorf("sanctions: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return out, false, fmt.Errorf("sanctions: %s is not a regular file", src)
	}
	if fi.Size() == 0 {
		return out, false, fmt.Errorf("sanctions: %s: empty file", name)
	}
	out.Size, out.ModTime = fi.Size(), fi.ModTime().UTC()
	out.LastModified = out.ModTime.Format(http.TimeFormat)
	if havePrev && prev.Size == out.Size && prev.ModTime.Equal(out.ModTime) {
		return prev, true, nil
	}
	if err := copyFile(src, dst); err != nil {
		return out, false, fmt.Errorf("sanctions: copying %s: %w", src, err)
	}
	return out, false, nil
}

type progressWriter struct {
	w      io.Writer
	name   string
	done   int64
	total  int64
	last   time.Time
	report func(string, int64, int64)
}

// Write reports at most every 100 ms; fetch makes the final report once the file is complete.
func (p *progressWriter) Write(b []byte) (int, error) {
	n, err := p.w.Write(b)
	p.done += int64(n)
	if now := time.Now(); now.Sub(p.last) > 100*time.Millisecond && p.done != p.total {
		p.last = now
		p.report(p.name, p.done, p.total)
	}
	return n, err
}

// fileNameOf returns the OFAC file a URL or path names, lower case.
func fileNameOf(raw string) (string, error) {
	p := raw
	if u, err := url.Parse(raw); err == nil && u.Scheme != "" && len(u.Scheme) > 1 {
		p = u.Path
	}
	name := strings.ToLower(path.Base(filepath.ToSlash(p)))
	switch name {
	case FileSDN, FileAlt, FileAdd, FileComments, FileXML:
		return name, nil
	}
	return "", fmt.Errorf("sanctions: %q does not name an OFAC file (sdn.csv, alt.csv, add.csv, sdn_comments.csv or sdn.xml)", raw)
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
