package sanctions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/payguard/payguard/internal/egress"
)

// DefaultURLs are OFAC's Sanctions List Service downloads of the legacy CSV set. They can be replaced in
// RefresherConfig.URLs (for a mirror, or local files).
var DefaultURLs = []string{
	"https://sanctionslistservice.ofac.treas.gov/api/PublicationPreview/exports/SDN.CSV",
	"https://sanctionslistservice.ofac.treas.gov/api/PublicationPreview/exports/ALT.CSV",
	"https://sanctionslistservice.ofac.treas.gov/api/PublicationPreview/exports/ADD.CSV",
	"https://sanctionslistservice.ofac.treas.gov/api/PublicationPreview/exports/SDN_COMMENTS.CSV",
}

// Refresh defaults.
const (
	DefaultInterval   = 24 * time.Hour
	DefaultMinEntries = 5000
	DefaultMinRatio   = 0.9
	DefaultRetryMin   = 15 * time.Second
	maxDownloadBytes  = 256 << 20
)

// RefresherConfig configures a Refresher. Zero values take the defaults.
type RefresherConfig struct {
	// URLs each name one file of the set by the last element of the path (sdn.csv, alt.csv, add.csv,
	// sdn_comments.csv or sdn.xml, any case). http(s) URLs are downloaded; file:// URLs and plain paths are
	// copied. A local directory stands for the OFAC files it holds at each refresh. Default: DefaultURLs.
	URLs []string
	// CacheDir keeps the last good copy (CacheDir/current) that is loaded at start. Required.
	CacheDir string
	// SeedDir, when set, is a list shipped with the binary (the container image's snapshot): LoadCache
	// serves it when CacheDir holds no list yet, so a new pod decides at once, with the snapshot's own
	// data_as_of (its meta.json), while Run downloads a fresh list. It is only read, never refreshed or
	// written; the first good refresh replaces it.
	SeedDir string
	// Interval between refreshes in Run. Default: DefaultInterval (daily).
	Interval time.Duration
	// RetryMin is Run's first retry delay after a failed refresh; each further failure in a row doubles it,
	// up to Interval, and every delay is drawn from its upper half (jitter, so a fleet started together
	// does not retry together). Default: DefaultRetryMin.
	RetryMin time.Duration
	// After is Run's timer (tests replace it); default time.After.
	After func(time.Duration) <-chan time.Time
	// Jitter returns a number in [0, 1) for the retry jitter; default math/rand/v2's Float64.
	Jitter func() float64
	// A new list must have at least MinEntries entries and at least MinRatio times the entries of the list
	// it replaces. Defaults: DefaultMinEntries, DefaultMinRatio.
	MinEntries int
	MinRatio   float64
	Client     *http.Client // default: a client with a 5-minute timeout
	Logger     *slog.Logger // default: slog.Default()
	// Registerer receives the refresh metrics (never the global registry unless passed in). Optional.
	Registerer prometheus.Registerer
	Now        func() time.Time // default: time.Now
	// Progress, when set, is called while a file downloads (total is -1 when the size is unknown).
	Progress func(file string, done, total int64)
}

// Health is the state of the refresher, for /health and the logs.
type Health struct {
	LastAttempt         time.Time `json:"last_attempt,omitzero"`
	LastSuccess         time.Time `json:"last_success,omitzero"`
	LastError           string    `json:"last_error,omitempty"`
	LastErrorAt         time.Time `json:"last_error_at,omitzero"`
	ConsecutiveFailures int       `json:"consecutive_failures"`
	Entries             int       `json:"entries"`
	DataAsOf            time.Time `json:"data_as_of,omitzero"`
	Source              string    `json:"source,omitempty"`
	// NextAttempt is when Run refreshes next (a retry after a failure, else the next interval).
	NextAttempt time.Time `json:"next_attempt,omitzero"`
}

// Refresher keeps a Screener's list fresh: it downloads the configured files (conditionally, with ETag and
// If-Modified-Since), parses and validates the new list, stores it as the last good copy and swaps it in.
// A failed, empty or implausible download never replaces the list being served.
type Refresher struct {
	cfg      RefresherConfig
	sources  []source
	screener *Screener
	mu       sync.Mutex // one refresh at a time
	hmu      sync.Mutex
	health   Health
	m        refreshMetrics
}

// refreshMetrics are the refresh counter; the list's gauges are a collector reading the state at scrape
// time (status.go).
type refreshMetrics struct {
	refreshes *prometheus.CounterVec
}

// NewRefresher returns a refresher for s. It registers its metrics on cfg.Registerer when one is given.
func NewRefresher(s *Screener, cfg RefresherConfig) (*Refresher, error) {
	if cfg.CacheDir == "" {
		return nil, errors.New("sanctions: refresher needs a cache directory")
	}
	if len(cfg.URLs) == 0 {
		cfg.URLs = DefaultURLs
	}
	seen := map[string]bool{}
	hasMain, hasDir := false, false
	var sources []source
	for _, u := range cfg.URLs {
		src, err := parseSource(u)
		if err != nil {
			return nil, err
		}
		sources = append(sources, src)
		if src.dir != "" {
			hasDir = true // its files are known at refresh time
			continue
		}
		if seen[src.name] {
			return nil, fmt.Errorf("sanctions: two URLs for %s", src.name)
		}
		seen[src.name] = true
		hasMain = hasMain || src.name == FileSDN || src.name == FileXML
	}
	if !hasMain && !hasDir {
		return nil, errors.New("sanctions: the refresh URLs must include sdn.csv or sdn.xml")
	}
	if cfg.Interval <= 0 {
		cfg.Interval = DefaultInterval
	}
	if cfg.MinEntries <= 0 {
		cfg.MinEntries = DefaultMinEntries
	}
	if cfg.MinRatio <= 0 {
		cfg.MinRatio = DefaultMinRatio
	}
	if cfg.Client == nil {
		cfg.Client = &http.Client{Timeout: 5 * time.Minute, Transport: egress.Transport()}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.RetryMin <= 0 {
		cfg.RetryMin = DefaultRetryMin
	}
	if cfg.After == nil {
		cfg.After = time.After
	}
	if cfg.Jitter == nil {
		cfg.Jitter = rand.Float64
	}
	r := &Refresher{cfg: cfg, screener: s, sources: sources}
	r.m = refreshMetrics{
		refreshes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "payguard_sanctions_refresh_total", Help: "Sanctions list refresh attempts by result (success, not_modified, failure).",
		}, []string{"result"}),
	}
	if cfg.Registerer != nil {
		for _, c := range []prometheus.Collector{r.m.refreshes, NewCollector(s, r, cfg.Now)} {
			if err := cfg.Registerer.Register(c); err != nil {
				return nil, fmt.Errorf("sanctions: registering metrics: %w", err)
			}
		}
	}
	return r, nil
}

// Health returns the refresher's state.
func (r *Refresher) Health() Health {
	r.hmu.Lock()
	defer r.hmu.Unlock()
	return r.health
}

// cacheMeta is stored beside the cached files.
type cacheMeta struct {
	DataAsOf       time.Time            `json:"data_as_of"`
	DataAsOfSource string               `json:"data_as_of_source,omitempty"` // an AsOf… constant
	FetchedAt      time.Time            `json:"fetched_at"`
	Files          map[string]cacheFile `json:"files"`
}

type cacheFile struct {
	URL          string    `json:"url"`
	ETag         string    `json:"etag,omitempty"`
	LastModified string    `json:"last_modified,omitempty"`
	Size         int64     `json:"size,omitempty"`    // local files: size and modification time stand in
	ModTime      time.Time `json:"mod_time,omitzero"` // for an ETag
}

const metaFile = "meta.json"

func (r *Refresher) currentDir() string { return filepath.Join(r.cfg.CacheDir, "current") }

// LoadCache serves the last good copy from the cache directory, if there is one. It is meant for start-up,
// before the first download.
func (r *Refresher) LoadCache() error {
	dir := r.currentDir()
	if _, err := os.Stat(dir); err != nil {
		// A crash between the two renames of a swap leaves only the previous copy.
		if olds, _ := filepath.Glob(filepath.Join(r.cfg.CacheDir, "previous")); len(olds) == 1 {
			dir = olds[0]
		} else if r.cfg.SeedDir != "" {
			return r.loadInstall(r.cfg.SeedDir, SourceSnapshot)
		} else {
			return fmt.Errorf("sanctions: no cached list in %s", r.cfg.CacheDir)
		}
	}
	return r.loadInstall(dir, SourceCache)
}

// loadInstall loads the list in dir, checks it is plausible (MinEntries) and serves it; kind (SourceCache or
// SourceSnapshot) is its SourceKind and names where it came from in its source and the log.
func (r *Refresher) loadInstall(dir, kind string) error {
	l, _, err := LoadDirStats(dir)
	if err != nil {
		return fmt.Errorf("sanctions: %s list: %w", kind, err)
	}
	if l.Len() < r.cfg.MinEntries {
		return fmt.Errorf("sanctions: %s list has %d entries, fewer than %d", kind, l.Len(), r.cfg.MinEntries)
	}
	l.source, l.sourceKind = kind+" "+dir, kind
	r.install(l)
	r.cfg.Logger.Info("sanctions list loaded from "+kind, "dir", dir, "entries", l.Len(), "data_as_of", l.DataAsOf(),
		"data_as_of_source", l.DataAsOfSource())
	return nil
}

// Run refreshes now and then every Interval until ctx ends. A failed refresh is retried after a backoff
// (RetryMin, doubling per failure in a row, at most Interval, with jitter), so a proxy started during a
// network blip does not wait a day for its list. Each failure is logged once, with the delay before the
// next try, and counted; the list being served stays.
func (r *Refresher) Run(ctx context.Context) {
	for {
		err := r.refreshLogged(ctx, true)
		wait := r.cfg.Interval
		if err != nil {
			wait = r.retryDelay(r.Health().ConsecutiveFailures)
		}
		r.hmu.Lock()
		r.health.NextAttempt = r.cfg.Now().Add(wait)
		r.hmu.Unlock()
		if err != nil {
			r.cfg.Logger.Error("sanctions list refresh failed; the current list keeps serving", "err", err,
				"consecutive_failures", r.Health().ConsecutiveFailures, "entries", r.screener.List().Len(),
				"retry_in", wait.Round(time.Second).String())
		}
		select {
		case <-ctx.Done():
			return
		case <-r.cfg.After(wait):
		}
	}
}

// retryDelay is the wait after the n-th failure in a row: RetryMin·2^(n-1) capped at Interval, drawn from
// its upper half.
func (r *Refresher) retryDelay(n int) time.Duration {
	d := r.cfg.RetryMin
	for i := 1; i < n && d < r.cfg.Interval; i++ {
		d *= 2
	}
	d = min(d, r.cfg.Interval)
	return d/2 + time.Duration(r.cfg.Jitter()*float64(d/2))
}

// Refresh downloads, validates and installs a new list. It returns nil when the list was replaced or the
// server said nothing changed (304). A failure is logged and counted.
func (r *Refresher) Refresh(ctx context.Context) error { return r.refreshLogged(ctx, false) }

// refreshLogged is Refresh; Run logs failures itself (quiet), with its retry delay.
func (r *Refresher) refreshLogged(ctx context.Context, quiet bool) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.cfg.Now()
	r.hmu.Lock()
	r.health.LastAttempt = now
	r.hmu.Unlock()
	changed, err := r.refresh(ctx, now)
	r.hmu.Lock()
	defer r.hmu.Unlock()
	if err != nil {
		r.health.LastError = err.Error()
		r.health.LastErrorAt = now
		r.health.ConsecutiveFailures++
		r.m.refreshes.WithLabelValues("failure").Inc()
		if !quiet {
			r.cfg.Logger.Error("sanctions list refresh failed; the current list keeps serving",
				"err", err, "consecutive_failures", r.health.ConsecutiveFailures, "entries", r.screener.List().Len())
		}
		return err
	}
	r.health.LastSuccess = now
	r.health.LastError = ""
	r.health.ConsecutiveFailures = 0
	if changed {
		r.m.refreshes.WithLabelValues("success").Inc()
	} else {
		r.m.refreshes.WithLabelValues("not_modified").Inc()
		r.cfg.Logger.Info("sanctions list not modified")
	}
	return nil
}

func (r *Refresher) refresh(ctx context.Context, now time.Time) (changed bool, err error) {
	created, err := mkdirAllTracked(r.cfg.CacheDir)
	if err != nil {
		return false, fmt.Errorf("sanctions: cache directory: %w", err)
	}
	// A first refresh that fails leaves no empty cache directory behind (a later start would find a cache
	// directory and no list in it, and `payguard sdn update` would seem to have done something).
	defer func() {
		if err != nil {
			removeEmpty(created)
		}
	}()
	cur := r.currentDir()
	old, _ := readMeta(cur)
	if old == nil || r.screener.List() == nil {
		old = &cacheMeta{} // without a served list, never accept a 304 for a file we do not have
	}
	tmp, err := os.MkdirTemp(r.cfg.CacheDir, "incoming-")
	if err != nil {
		return false, fmt.Errorf("sanctions: %w", err)
	}
	defer os.RemoveAll(tmp)

	files, err := expand(r.sources)
	if err != nil {
		return false, err
	}
	meta := &cacheMeta{FetchedAt: now.UTC(), Files: map[string]cacheFile{}}
	// A file that joined or left the set changes the list even when every file answers "not modified".
	anyChanged := len(files) != len(old.Files)
	var mainLastModified time.Time
	mainSource := AsOfLastModified
	for _, file := range files {
		u, name := file.url, file.name
		prev, havePrev := old.Files[name]
		if havePrev && prev.URL != u {
			havePrev = false
		}
		if havePrev {
			if _, err := os.Stat(filepath.Join(cur, name)); err != nil {
				havePrev = false
			}
		}
		f, notModified, err := r.fetch(ctx, u, name, filepath.Join(tmp, name), prev, havePrev)
		if err != nil {
			return false, err
		}
		if notModified {
			if err := copyFile(filepath.Join(cur, name), filepath.Join(tmp, name)); err != nil {
				return false, fmt.Errorf("sanctions: reusing cached %s: %w", name, err)
			}
			f = prev
		} else {
			anyChanged = true
		}
		meta.Files[name] = f
		if name == FileSDN || name == FileXML {
			if t, err := http.ParseTime(f.LastModified); err == nil {
				mainLastModified = t.UTC()
			}
			if !f.ModTime.IsZero() {
				// A local file (copyLocal): its Last-Modified is its modification time, not a server's.
				mainSource = AsOfFileModTime
			}
		}
	}
	if !anyChanged {
		return false, nil
	}
	l, st, err := LoadDirStats(tmp)
	if err != nil {
		return false, err
	}
	if !l.fromXML() {
		// The CSV set states no publish date: the server's Last-Modified (a local source's modification
		// time, said as such), else the fetch time.
		l.dataAsOf, l.asOfSource = now.UTC(), AsOfFetchTime
		if !mainLastModified.IsZero() {
			l.dataAsOf, l.asOfSource = mainLastModified, mainSource
		}
	}
	meta.DataAsOf, meta.DataAsOfSource = l.dataAsOf, l.asOfSource
	if err := r.validate(l, st); err != nil {
		return false, err
	}
	if err := writeMeta(tmp, meta); err != nil {
		return false, err
	}
	if err := r.persist(tmp); err != nil {
		return false, err
	}
	l.source, l.sourceKind = strings.Join(r.cfg.URLs, " "), SourceDownload
	r.install(l)
	r.cfg.Logger.Info("sanctions list refreshed", "entries", l.Len(), "aliases_rows", st.AltRows,
		"addresses", l.AddressCount(), "data_as_of", l.DataAsOf(), "warnings", len(l.Warnings()))
	return true, nil
}

func (r *Refresher) validate(l *List, st LoadStats) error {
	if st.RecordCountMismatch() {
		return fmt.Errorf("sanctions: SDN XML states %d records but holds %d entries (a cut file?); keeping the current list", st.RecordCount, st.XMLEntries)
	}
	if l.Len() < r.cfg.MinEntries {
		return fmt.Errorf("sanctions: new list has %d entries, fewer than the minimum %d; keeping the current list", l.Len(), r.cfg.MinEntries)
	}
	if cur := r.screener.List(); cur != nil && float64(l.Len()) < r.cfg.MinRatio*float64(cur.Len()) {
		return fmt.Errorf("sanctions: new list has %d entries, under %.0f%% of the current %d; keeping the current list",
			l.Len(), 100*r.cfg.MinRatio, cur.Len())
	}
	return nil
}

// persist makes dir the cached copy: current moves to previous, dir to current.
func (r *Refresher) persist(dir string) error {
	cur := r.currentDir()
	prev := filepath.Join(r.cfg.CacheDir, "previous")
	if err := os.RemoveAll(prev); err != nil {
		return fmt.Errorf("sanctions: cache: %w", err)
	}
	if _, err := os.Stat(cur); err == nil {
		if err := os.Rename(cur, prev); err != nil {
			return fmt.Errorf("sanctions: cache: %w", err)
		}
	}
	if err := os.Rename(dir, cur); err != nil {
		return fmt.Errorf("sanctions: cache: %w", err)
	}
	return os.RemoveAll(prev)
}

func (r *Refresher) install(l *List) {
	r.screener.Swap(l)
	r.hmu.Lock()
	r.health.Entries = l.Len()
	r.health.DataAsOf = l.DataAsOf()
	r.health.Source = l.Source()
	r.hmu.Unlock()
}

func readMeta(dir string) (*cacheMeta, error) {
	b, err := os.ReadFile(filepath.Join(dir, metaFile))
	if err != nil {
		return nil, err
	}
	var m cacheMeta
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("sanctions: %s: %w", metaFile, err)
	}
	return &m, nil
}

func writeMeta(dir string, m *cacheMeta) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, metaFile), b, 0o644)
}

// mkdirAllTracked is os.MkdirAll that returns the directories it created, deepest last.
func mkdirAllTracked(dir string) ([]string, error) {
	var missing []string
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil {
			break
		}
		missing = append(missing, d)
		if parent := filepath.Dir(d); parent == d {
			break
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	slices.Reverse(missing)
	return missing, nil
}

// removeEmpty removes the directories mkdirAllTracked created, deepest first, as long as they are empty.
func removeEmpty(created []string) {
	for i := len(created) - 1; i >= 0; i-- {
		if os.Remove(created[i]) != nil {
			return
		}
	}
}
