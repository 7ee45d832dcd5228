package admin

import (
	"bufio"
	"encoding/json"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/payguard/payguard/policy"
)

// GET /v1/decisions (admin token): the decision journal for programs, oldest first, filtered by time
// (since, until: RFC 3339), agent, host and decision, in pages of limit (default 100, at most 1000). A page
// that is not the last has next_cursor; pass it as cursor for the next one. The cursor is the last entry's
// (ts, receipt id), so pages stay right while the journal rotates (entries rotated away are gone). Each
// entry is the journal's line as written (proxy.JournalEntry).

type decisionsPage struct {
	Decisions  []json.RawMessage `json:"decisions"`
	NextCursor string            `json:"next_cursor,omitempty"`
}

// journalKeys are the members of a journal line the filter reads.
type journalKeys struct {
	TS        string `json:"ts"`
	Agent     string `json:"agent"`
	Host      string `json:"host"`
	Decision  string `json:"decision"`
	ReceiptID string `json:"receipt_id"`
}

type decisionFilter struct {
	since, until time.Time
	agent, host  string
	decision     string
	afterTS      string
	afterID      string
}

func (f decisionFilter) match(e *journalKeys) bool {
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

func (h *handler) decisions(w http.ResponseWriter, r *http.Request) {
	j := h.o.Journal
	if j == nil {
		writeJSON(w, http.StatusNotFound, apiError("journal_disabled", "the decision journal is off (proxy.journal.path)"))
		return
	}
	q := r.URL.Query()
	var f decisionFilter
	bad := func(msg string) { writeJSON(w, http.StatusBadRequest, apiError("invalid_request", msg)) }
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
	switch policy.Decision(f.decision) {
	case "", policy.Allow, policy.Hold, policy.Block:
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
	page := decisionsPage{Decisions: []json.RawMessage{}}
	var keys []journalKeys // of page.Decisions, for the cursor
	_ = j.Flush()
	for _, path := range j.Files() {
		if len(page.Decisions) > limit {
			break
		}
		scanJournal(path, func(line []byte, e *journalKeys) bool {
			if f.match(e) {
				page.Decisions = append(page.Decisions, line)
				keys = append(keys, *e)
			}
			return len(page.Decisions) <= limit
		})
	}
	if len(page.Decisions) > limit {
		page.Decisions = page.Decisions[:limit]
		last := keys[limit-1]
		page.NextCursor = last.TS + "|" + last.ReceiptID
	}
	writeJSON(w, http.StatusOK, page)
}

// scanJournal calls fn for each entry of a journal file (its line, a copy, and its keys) until fn returns
// false; lines that are not one JSON object are skipped (a line cut short by a crash).
func scanJournal(path string, fn func([]byte, *journalKeys) bool) {
	f, err := os.Open(path)
	if err != nil {
		return
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 4<<20)
	for sc.Scan() {
		var e journalKeys
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			continue
		}
		if !fn(append([]byte(nil), sc.Bytes()...), &e) {
			return
		}
	}
}
