package proxy

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/payguard/payguard/preflight"
)

// A Journal is the append-only decision journal: one JSON line per decision the engine made, with the
// exact input it judged (so the receipt's input_sha256 can be recomputed) and the signed result (so its
// signature can be checked offline against the receipt keys: receipts.VerifyResult, or
// `payguard verify-receipt --journal FILE`). It rotates at MaxBytes into FILE.1 … FILE.<MaxFiles>, dropping
// the oldest, so its disk use is bounded by (MaxFiles+1) × MaxBytes.
//
// A line that cannot be written is counted and logged, never a reason to refuse or allow: the journal
// records decisions, it does not make them.
type Journal struct {
	path     string
	maxBytes int64
	maxFiles int
	mu       sync.Mutex
	f        *os.File
	w        *bufio.Writer
	size     int64
}

// JournalEntry is one line.
type JournalEntry struct {
	TS           string          `json:"ts"`
	Agent        string          `json:"agent"`
	Method       string          `json:"method"`
	URL          string          `json:"url"`
	Host         string          `json:"host"`
	Decision     string          `json:"decision"`         // the decision made (and signed)
	Shadow       string          `json:"shadow,omitempty"` // would_block / would_hold: report mode let it through
	Reasons      []string        `json:"reasons"`
	ReceiptID    string          `json:"receipt_id"`
	ConfigSHA256 string          `json:"config_sha256"`
	Input        json.RawMessage `json:"input"`  // the PreflightInput judged, as hashed into input_sha256
	Result       json.RawMessage `json:"result"` // the signed PreflightResult
}

// OpenJournal opens (appending to) the journal at path.
func OpenJournal(path string, maxBytes int64, maxFiles int) (*Journal, error) {
	if maxBytes < 4096 || maxFiles < 1 {
		return nil, errors.New("journal: max_bytes must be at least 4096 and max_files at least 1")
	}
	j := &Journal{path: path, maxBytes: maxBytes, maxFiles: maxFiles}
	if err := j.open(); err != nil {
		return nil, err
	}
	return j, nil
}

func (j *Journal) open() error {
	f, err := os.OpenFile(j.path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("journal: %w", err)
	}
	j.f, j.w, j.size = f, bufio.NewWriter(f), st.Size()
	return nil
}

// Append writes one entry (and flushes it: a line is on disk, up to the OS cache, when Append returns).
// Its ts is stamped under the journal's lock, so that lines are in time order (the cursor of
// GET /v1/decisions relies on it).
func (j *Journal) Append(e JournalEntry) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	e.TS = time.Now().UTC().Format(time.RFC3339Nano)
	line, err := json.Marshal(e)
	if err != nil {
		return err
	}
	line = append(line, '\n')
	if j.f == nil {
		return errors.New("journal: closed")
	}
	if j.size > 0 && j.size+int64(len(line)) > j.maxBytes {
		if err := j.rotate(); err != nil {
			return err
		}
	}
	n, err := j.w.Write(line)
	j.size += int64(n)
	if err == nil {
		err = j.w.Flush()
	}
	return err
}

// rotate moves FILE.i to FILE.i+1 (the last one is removed) and FILE to FILE.1, and starts a new FILE.
func (j *Journal) rotate() error {
	j.w.Flush()
	j.f.Close()
	j.f = nil
	os.Remove(fmt.Sprintf("%s.%d", j.path, j.maxFiles))
	for i := j.maxFiles - 1; i >= 1; i-- {
		os.Rename(fmt.Sprintf("%s.%d", j.path, i), fmt.Sprintf("%s.%d", j.path, i+1))
	}
	if err := os.Rename(j.path, j.path+".1"); err != nil {
		return fmt.Errorf("journal: rotate: %w", err)
	}
	return j.open()
}

// Flush writes the buffered lines to the file (GET /v1/decisions reads the files).
func (j *Journal) Flush() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.w == nil {
		return nil
	}
	return j.w.Flush()
}

// Files are the journal's files, oldest first.
func (j *Journal) Files() []string {
	var out []string
	for i := j.maxFiles; i >= 1; i-- {
		if p := fmt.Sprintf("%s.%d", j.path, i); fileExists(p) {
			out = append(out, p)
		}
	}
	return append(out, j.path)
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// Close flushes and closes the journal.
func (j *Journal) Close() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f == nil {
		return nil
	}
	j.w.Flush()
	err := j.f.Close()
	j.f = nil
	return err
}

// journal records a decision the engine made (v.Result set) with its input and signed result.
func (p *Proxy) journal(method, url string, v verdict, in *preflight.Input) {
	j := p.opts.Journal
	if j == nil || v.Result == nil || in == nil {
		return
	}
	input, err := json.Marshal(in)
	if err == nil {
		var result []byte
		if result, err = json.Marshal(v.Result); err == nil {
			hash := ""
			if v.rs != nil {
				hash = v.rs.hash
			}
			err = j.Append(JournalEntry{Agent: v.Agent,
				Method: method, URL: url, Host: hostOf(url), Decision: v.Result.Decision, Shadow: v.Shadow, Reasons: v.Reasons,
				ReceiptID: v.Result.Receipt.ID, ConfigSHA256: hash, Input: input, Result: result})
		}
	}
	if err != nil {
		p.metrics.journalErrors.Inc()
		p.log.Error("journal write failed", "receipt_id", v.Result.Receipt.ID, "error", err.Error())
	}
}
