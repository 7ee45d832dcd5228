package sanctions

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Status is what /readyz and /health say about the list: the list being served (if any) and, when a
// Refresher keeps it, how its refreshes go. Times that never happened are left out, not zero.
type Status struct {
	Loaded     bool      `json:"loaded"`
	Entries    int       `json:"entries,omitempty"`
	DataAsOf   time.Time `json:"data_as_of,omitzero"`
	AgeSeconds int64     `json:"age_seconds,omitempty"`
	AsOfSource string    `json:"data_as_of_source,omitempty"` // what DataAsOf is (AsOfSource values)
	// AsOfWarning is set when DataAsOf is only a file's modification time (FileModTimeWarning).
	AsOfWarning string    `json:"data_as_of_warning,omitempty"`
	Source      string    `json:"source,omitempty"`
	SourceKind  string    `json:"source_kind,omitempty"` // SourceDirectory, SourceCache, SourceSnapshot or SourceDownload
	Refreshed   bool      `json:"refreshed"`             // a Refresher keeps the list (false with --sanctions-dir)
	LastSuccess time.Time `json:"last_success,omitzero"`
	LastError   string    `json:"last_error,omitempty"`
	LastErrorAt time.Time `json:"last_error_at,omitzero"`
	Failures    int       `json:"consecutive_failures,omitempty"`
	NextAttempt time.Time `json:"next_attempt,omitzero"`
}

// Public is the status as a public document may show it (payguard serve's /health and /readyz): the kind of
// source and the dates, without the paths or URLs the list came from, and a refresh error without its text
// (which names paths and addresses; the log has it).
func (st Status) Public() Status {
	st.Source = ""
	if st.LastError != "" {
		st.LastError = "the last refresh failed (details in the service log)"
	}
	return st
}

// FileModTimeWarning is what /readyz, /health and the start log say when a list's data_as_of is a file's
// modification time: OFAC's CSV set carries no publication date, and a copy resets the time.
const FileModTimeWarning = "data_as_of is the list files' modification time, not OFAC's publication date: a copy " +
	"made today of an old list reports today. Load SDN.XML (it states its Publish_Date) or let payguard download " +
	"the list (the server's Last-Modified is recorded)"

// StatusOf describes the list s serves, with r's refresh state when r is not nil, at now.
func StatusOf(s *Screener, r *Refresher, now time.Time) Status {
	var st Status
	if l := s.List(); l != nil {
		st.Loaded, st.Entries, st.DataAsOf, st.Source = true, l.Len(), l.DataAsOf().UTC(), l.Source()
		st.AsOfSource, st.SourceKind = l.DataAsOfSource(), l.SourceKind()
		if st.AsOfSource == AsOfFileModTime {
			st.AsOfWarning = FileModTimeWarning
		}
		st.AgeSeconds = max(int64(now.Sub(l.DataAsOf())/time.Second), 0)
	}
	if r != nil {
		h := r.Health()
		st.Refreshed = true
		st.LastSuccess, st.LastError, st.LastErrorAt = h.LastSuccess, h.LastError, h.LastErrorAt
		st.Failures, st.NextAttempt = h.ConsecutiveFailures, h.NextAttempt
	}
	return st
}

// collector exports a Status as gauges, read at scrape time. A value that does not exist (no list loaded,
// no refresh ever succeeded or failed, no refresher) is an absent series, never a sentinel such as -1 or 0.
type collector struct {
	s   *Screener
	r   *Refresher
	now func() time.Time
}

var (
	descLoaded = prometheus.NewDesc("payguard_sanctions_list_loaded",
		"1 when a sanctions list is loaded and served, else 0.", nil, nil)
	descEntries = prometheus.NewDesc("payguard_sanctions_entries",
		"Entries in the sanctions list being served (absent without a list).", nil, nil)
	descAsOf = prometheus.NewDesc("payguard_sanctions_data_as_of_timestamp_seconds",
		"Unix time of the served list's publication (data_as_of; absent without a list).", nil, nil)
	descAsOfMtime = prometheus.NewDesc("payguard_sanctions_data_as_of_is_file_mtime",
		"1 when the served list's data_as_of is only a file's modification time (a copy of an old list made today "+
			"reports today), 0 when it is a publication date, a server's Last-Modified or a fetch time (absent without a list).", nil, nil)
	descAge = prometheus.NewDesc("payguard_sanctions_list_age_seconds",
		"Seconds since the served list's data_as_of (absent without a list).", nil, nil)
	descSuccess = prometheus.NewDesc("payguard_sanctions_last_success_timestamp_seconds",
		"Unix time of the last successful refresh (absent until one succeeds, and with --sanctions-dir).", nil, nil)
	descError = prometheus.NewDesc("payguard_sanctions_last_error_timestamp_seconds",
		"Unix time of the last failed refresh (absent until one fails).", nil, nil)
	descFailures = prometheus.NewDesc("payguard_sanctions_refresh_consecutive_failures",
		"Sanctions list refreshes failed in a row (absent with --sanctions-dir).", nil, nil)
	descNext = prometheus.NewDesc("payguard_sanctions_next_refresh_timestamp_seconds",
		"Unix time of the next refresh attempt, a retry after a failure included (absent when none is scheduled).", nil, nil)
)

// NewCollector returns the sanctions list gauges for s, with r's refresh state when r is not nil (a list
// from --sanctions-dir has no refresher). NewRefresher registers one itself.
func NewCollector(s *Screener, r *Refresher, now func() time.Time) prometheus.Collector {
	if now == nil {
		now = time.Now
	}
	return collector{s: s, r: r, now: now}
}

func (c collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descLoaded, descEntries, descAsOf, descAsOfMtime, descAge, descSuccess, descError, descFailures, descNext} {
		ch <- d
	}
}

func (c collector) Collect(ch chan<- prometheus.Metric) {
	st := StatusOf(c.s, c.r, c.now())
	gauge := func(d *prometheus.Desc, v float64) { ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v) }
	unix := func(d *prometheus.Desc, t time.Time) {
		if !t.IsZero() {
			gauge(d, float64(t.UnixNano())/1e9)
		}
	}
	if !st.Loaded {
		gauge(descLoaded, 0)
	} else {
		gauge(descLoaded, 1)
		gauge(descEntries, float64(st.Entries))
		unix(descAsOf, st.DataAsOf)
		mtime := 0.0
		if st.AsOfSource == AsOfFileModTime {
			mtime = 1
		}
		gauge(descAsOfMtime, mtime)
		gauge(descAge, float64(st.AgeSeconds))
	}
	if st.Refreshed {
		unix(descSuccess, st.LastSuccess)
		unix(descError, st.LastErrorAt)
		gauge(descFailures, float64(st.Failures))
		unix(descNext, st.NextAttempt)
	}
}
