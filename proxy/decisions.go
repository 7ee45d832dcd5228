package proxy

import (
	"bufio"
	"encoding/json"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"
)

// GET /v1/decisions (admin token): the decision journal for programs, oldest first, filtered by time
// (since, until: RFC 3339), agent, host and decision, in pages of limit (default 100, at most 1000). A page
// that is not the last has next_cursor; pass it as cursor for the next one. The cursor is the last entry's
// (ts, receipt id), so pages stay right while the journal rotates (entries rotated away are gone).

type decisionsPage struct {
	Decisions  []JournalEntry `json:"decisions"`
	NextCursor string         `json:"next_cursor,omitempty"`
}

type decisionFilter struct {
	since, until time.Time
	agent, host  string
	decision     string
	afterTS      string
	afterID      string
}

func (f decisionFilter) match(e *JournalEntry) bool {
	if f.afterTS != "" && (e.TS < f.afterTS || e.TS == f.afterTS && e.ReceiptID <= f.afterID) {
		return false
	}
	if f.agent != "" && e.Agent != f.agent || f.host != "" && !strings.EqualFold(e.Host, f.host) ||
		f.decision != "" && e.Decision != f.decision {
		return false
	}
	if !f.since.IsZero() || !f.until.IsZero() {
		ts, err := time.Parse(time.RFC3339Nano, e.TS)
		if err != nil || !f.since.IsZero() && ts.Before(f.since) || !f.until.IsZero() && !ts.Before(f.until) {
			return false
		}
	}
	return true
}

func (p *Proxy) decisionsAPI(w http.ResponseWriter, r *http.Request) {
	j := p.opts.Journal
	if j == nil {
		writeJSON(w, http.StatusNotFound, apiError{"journal_disabled", "the decision journal is off (proxy.journal.path)"})
		return
	}
	q := r.URL.Query()
	var f decisionFilter
	bad := func(msg string) { writeJSON(w, http.StatusBadRequest, apiError{"invalid_request", msg}) }
	for name, dst := range map[string]*time.Time{"since": &f.since, "until": &f.until} {
		if v := q.Get(name); v != "" {
			t, err := time.Parse(time.RFC3339, v)
			if err != nil {
				bad(name + " must be an RFC 3339 time")
				return
			}
			*dst = t
		}
	}
	f.agent, f.host, f.decision = q.Get("agent"), q.Get("host"), q.Get("decision")
	switch f.decision {
	case "", allow, hold, block:
	default:
		bad("decision must be allow, hold or block")
		return
	}
	limit := 100
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1000 {
			bad("limit must be 1 to 1000")
			return
		}
		limit = n
	}
	if c := q.Get("cursor"); c != "" {
		ts, id, ok := strings.Cut(c, "|")
		if !ok || len(c) > 200 {
			bad("cursor is not one this API returned")
			return
		}
		f.afterTS, f.afterID = ts, id
	}
	page := decisionsPage{Decisions: []JournalEntry{}}
	j.mu.Lock()
	if j.w != nil {
		j.w.Flush()
	}
	j.mu.Unlock()
	for _, path := range j.Files() {
		if len(page.Decisions) > limit {
			break
		}
		scanJournal(path, func(e *JournalEntry) bool {
			if f.match(e) {
				page.Decisions = append(page.Decisions, *e)
			}
			return len(page.Decisions) <= limit
		})
	}
	if len(page.Decisions) > limit {
		page.Decisions = page.Decisions[:limit]
		last := page.Decisions[limit-1]
		page.NextCursor = last.TS + "|" + last.ReceiptID
	}
	writeJSON(w, http.StatusOK, page)
}

// scanJournal calls fn for each entry of a journal file until fn returns false; unreadable lines are
// skipped (a line cut short by a crash).
func scanJournal(path string, fn func(*JournalEntry) bool) {
	f, err := os.Open(path)
	if err != nil {
		return
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 4<<20)
	for sc.Scan() {
		var e JournalEntry
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			continue
		}
		if !fn(&e) {
			return
		}
	}
}
