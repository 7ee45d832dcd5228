package index

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/payguard/payguard/store"
)

// Defaults for Writer.
const (
	DefaultQueue     = 4096
	maxBatch         = 128
	writeTimeout     = 5 * time.Second
	defaultCloseWait = 5 * time.Second
	// DefaultGather is WriterOptions.Gather's default.
	DefaultGather = 10 * time.Millisecond
)

// WriterOptions configure a Writer.
type WriterOptions struct {
	// Queue bounds the observations waiting for the writer to take them (it may hold as many more while it
	// writes them); when it is full an observation is dropped and counted, never waited for (default
	// DefaultQueue).
	Queue int
	// Keep is the retention every write enforces.
	Keep store.Retention
	// Coalesce: an observation identical to the last one of its method and source written for its URL (same
	// status, usability, offers, payee and category) less than Coalesce later is not written again (counted
	// as coalesced). Failed probes, and the first observation after any unusable one, are always written.
	// 0 writes every one.
	Coalesce time.Duration
	// Writing, when set, is called with each URL before its observations are written, and the func it returns
	// after the write ends, whether it succeeded or not (Cache.Writing): a cache in front of the store neither
	// keeps nor takes an entry for the URL in between, so once the store has an observation no read through
	// the cache misses it.
	Writing func(url string) (done func())
	// Registry, when set, gets the writer's metrics.
	Registry prometheus.Registerer
	Logger   *slog.Logger
	// Gather is how long the writer lets observations gather in the queue after it wrote a batch, before it
	// takes the next one (default DefaultGather; negative: not at all). Why: the writer goroutine blocked on
	// an empty queue is woken by every Observe, and on the proxy's 402 path that was one goroutine handoff
	// per decided 402 (a wake-up of another thread, and the writer's run competing with the request's next
	// steps for the CPU). While the writer sleeps, Observe's append to the queue wakes nobody (only the first
	// observation into an empty queue kicks, into a one-slot channel no one waits on meanwhile), so under a
	// steady stream it wakes about once per Gather instead of once per 402. The first observation
	// after a quiet spell is still taken at once. An observation reaches the store at most Gather later;
	// Close cuts the wait short.
	Gather time.Duration
}

// Writer writes observations to the store off the request path: Observe only queues (never blocks), and one
// goroutine drains the queue in batches. It is safe for concurrent use.
type Writer struct {
	st store.Endpoints
	// The store's optional capabilities (see NewWriter), resolved once; nil when it lacks one.
	batch      store.ObservationBatcher
	categories store.CategoryPrices
	sitePayees store.SitePayees

	keep store.Retention
	log  *slog.Logger
	done chan struct{}
	// The queue: observations not yet taken by the writer goroutine. A slice that grows to the largest burst
	// rather than a channel of Queue observations: a channel's buffer is one object the collector scans whole
	// at every cycle, full or empty (4,096 × 208 bytes of pointer-holding Observations, ~16% of the proxy's
	// scannable heap), while these two arrays stay as small as what gathers between batches.
	mu      sync.Mutex
	pending []store.Observation // appended to by Observe, taken whole by the writer
	spare   []store.Observation // the array taken last, for the next swap (the writer goroutine's alone)
	limit   int                 // WriterOptions.Queue: past it Observe drops
	closed  bool
	kick    chan struct{} // one slot: Observe's first observation into an empty queue wakes a waiting writer
	gather  time.Duration // WriterOptions.Gather; 0: none
	closing chan struct{} // closed by Close: the writer stops gathering

	coalesce time.Duration
	last     map[string]*urlMemory // by URL; touched only by the writer goroutine
	sites    map[string]lastWrite  // site payee entries last written, by site and entry key (writer goroutine)
	writing  func(url string) (done func())

	written   *prometheus.CounterVec
	dropped   *prometheus.CounterVec
	coalesced prometheus.Counter
}

// urlMemory is what the writer remembers of one URL's writes.
type urlMemory struct {
	// last is the last observation written per method and source: repeats are compared with the last of
	// their own kind, so an agent that pays every time (a 402, its paid response, a 402 again...) still has
	// its repeats coalesced.
	last map[string]lastWrite
	meta string // the metadata last written for the URL: a repeat is not stored again
	// cat/catAt are the category price entry last written for the URL (category and prices) and when.
	cat   string
	catAt time.Time
	// category is the newest category the URL's seller declared in what was written: a settled payment's
	// category price names it (the paid response itself declares none).
	category string
}

type lastWrite struct {
	sig string
	at  time.Time
}

// maxKindsPerURL bounds a URL's method-and-source memory (methods come from requests); past it, it starts over.
const maxKindsPerURL = 16

// maxCoalesceURLs bounds the coalescing memory; past it the map starts over (a few extra writes).
const maxCoalesceURLs = 100_000

// NewWriter starts a writer to st. Besides store.Endpoints, st may have three optional capabilities, each a
// documented store interface that NewWriter looks for once, here:
//   - store.ObservationBatcher: a batch of observations is written in one call (bolt: one transaction and
//     fsync) instead of one PutObservation each;
//   - store.CategoryPrices: paid prices also feed their category's sample (the category median rule);
//   - store.SitePayees: payees also feed their site's payee record (hold_on_payto_change across a site).
//
// A store without the first writes the same observations one by one; without the others the rules that
// need them fall back as SPEC says (own history, the endpoint's own payee). bolt, redis and memory implement
// the last two; bolt alone the first.
func NewWriter(st store.Endpoints, o WriterOptions) *Writer {
	if o.Queue <= 0 {
		o.Queue = DefaultQueue
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	switch {
	case o.Gather == 0:
		o.Gather = DefaultGather
	case o.Gather < 0:
		o.Gather = 0
	}
	w := &Writer{gather: o.Gather, closing: make(chan struct{}), st: st, keep: o.Keep, limit: o.Queue, kick: make(chan struct{}, 1), log: o.Logger, done: make(chan struct{}),
		coalesce: o.Coalesce, last: map[string]*urlMemory{}, sites: map[string]lastWrite{}, writing: o.Writing,
		coalesced: prometheus.NewCounter(prometheus.CounterOpts{Name: "payguard_index_observations_coalesced_total",
			Help: "Endpoint observations not written because they repeated the last one of their endpoint within index.coalesce."}),
		written: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "payguard_index_observations_written_total",
			Help: "Endpoint observations written to the store, by source."}, []string{"source"}),
		dropped: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "payguard_index_observations_dropped_total",
			Help: "Endpoint observations not written: queue_full (never waited for), store_error, invalid or closed."}, []string{"reason"}),
	}
	for _, s := range []string{store.SourceChallenge, store.SourcePaid, store.SourceProbe} {
		w.written.WithLabelValues(s)
	}
	for _, r := range []string{"queue_full", "store_error", "invalid", "closed"} {
		w.dropped.WithLabelValues(r)
	}
	if o.Registry != nil {
		o.Registry.MustRegister(w.written, w.dropped, w.coalesced)
	}
	w.batch, _ = st.(store.ObservationBatcher)
	w.categories, _ = st.(store.CategoryPrices)
	w.sitePayees, _ = st.(store.SitePayees)
	go w.run()
	return w
}

// Observe queues o; when the queue is full (or the writer is closed) it drops o and counts it. It never
// blocks on the store.
func (w *Writer) Observe(o store.Observation) {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		w.dropped.WithLabelValues("closed").Inc()
		return
	}
	if len(w.pending) >= w.limit {
		w.mu.Unlock()
		w.dropped.WithLabelValues("queue_full").Inc()
		return
	}
	w.pending = append(w.pending, o)
	first := len(w.pending) == 1
	w.mu.Unlock()
	if first {
		select {
		case w.kick <- struct{}{}:
		default: // a kick is already waiting
		}
	}
}

// Close stops accepting observations and waits (at most a few seconds) for the queued ones to be written.
// Observations made after Close are dropped and counted.
func (w *Writer) Close() {
	w.mu.Lock()
	if !w.closed {
		w.closed = true
		close(w.closing)
	}
	w.mu.Unlock()
	select {
	case <-w.done:
	case <-time.After(defaultCloseWait):
		w.log.Warn("index writer: observations still queued at shutdown were not written")
	}
}

// run is the writer goroutine: it waits for a kick (or Close), then takes what is queued, writes it in
// batches of at most maxBatch, lets the next ones gather, and takes again until the queue is found empty.
func (w *Writer) run() {
	defer close(w.done)
	timer := time.NewTimer(time.Hour) // wait's, reused
	timer.Stop()
	for {
		select {
		case <-w.kick:
		case <-w.closing:
		}
		for {
			taken, closed := w.take()
			if len(taken) == 0 {
				if closed {
					return
				}
				break
			}
			for len(taken) > 0 {
				n := min(len(taken), maxBatch)
				w.write(taken[:n])
				taken = taken[n:]
			}
			if !closed {
				w.wait(timer)
			}
		}
	}
}

// take swaps the queue for the spare array and returns what it held, and whether Close was called; the
// array returned becomes the next spare, emptied (its observations released) and dropped when a burst made
// it large.
func (w *Writer) take() ([]store.Observation, bool) {
	spare := w.spare // the previous take's, written by now (spare is the writer goroutine's alone)
	clear(spare)     // its observations released, not kept alive by the array
	w.mu.Lock()
	taken, closed := w.pending, w.closed
	w.pending = spare[:0]
	w.mu.Unlock()
	w.spare = nil
	if cap(taken) <= 4*maxBatch {
		w.spare = taken
	}
	return taken, closed
}

// wait lets observations gather (WriterOptions.Gather) before the next batch; Close cuts it short.
func (w *Writer) wait(t *time.Timer) {
	if w.gather <= 0 {
		return
	}
	t.Reset(w.gather)
	select {
	case <-t.C:
	case <-w.closing:
		t.Stop()
	}
}

func (w *Writer) write(batch []store.Observation) {
	valid := batch[:0:0]
	for _, o := range batch {
		if len(o.Error) > store.MaxObservationError {
			o.Error = shorten(o.Error, store.MaxObservationError)
		}
		if err := store.CheckObservation(o); err != nil {
			w.dropped.WithLabelValues("invalid").Inc()
			continue
		}
		if w.repeats(o) {
			w.coalesced.Inc()
			continue
		}
		w.dedupeMetadata(&o)
		valid = append(valid, o)
	}
	ctx, cancel := context.WithTimeout(context.Background(), writeTimeout)
	defer cancel()
	if b := w.batch; b != nil && len(valid) > 1 {
		for _, o := range valid {
			defer w.begin(o.URL)()
		}
		if err := b.PutObservations(ctx, valid, w.keep); err != nil {
			w.dropped.WithLabelValues("store_error").Add(float64(len(valid)))
			for _, o := range valid {
				delete(w.last, o.URL) // not written: the next one must not be coalesced away (nor its metadata dropped)
			}
			w.log.Warn("index writer: observations not written", "count", len(valid), "error", err.Error())
			return
		}
		for _, o := range valid {
			w.written.WithLabelValues(o.Source).Inc()
			w.putCategory(ctx, o)
			w.putSitePayees(ctx, o)
		}
		return
	}
	for _, o := range valid {
		done := w.begin(o.URL)
		err := w.st.PutObservation(ctx, o, w.keep)
		if err != nil {
			done()
			w.dropped.WithLabelValues("store_error").Inc()
			delete(w.last, o.URL)
			w.log.Warn("index writer: observation not written", "url", o.URL, "error", err.Error())
			continue
		}
		w.written.WithLabelValues(o.Source).Inc()
		w.putSitePayees(ctx, o) // inside the write fence: the cache takes no stale site record meanwhile
		done()
		w.putCategory(ctx, o)
	}
}

// putCategory writes o's entry in its seller's category price sample (store.CategoryPrices), when the store
// keeps one and o has one, unless it repeats the URL's last entry within the coalescing interval. Like the
// observation itself this happens here, off the request path. A failure is logged: the category median is
// then built from the entries written before, or not at all (the rule falls back to own history).
func (w *Writer) putCategory(ctx context.Context, o store.Observation) {
	cs := w.categories
	if cs == nil {
		return
	}
	if o.Category != "" {
		w.memory(o.URL).category = o.Category
	} else if o.Source == store.SourcePaid && Costly(o) {
		o.Category = w.categoryOf(ctx, o.URL)
	}
	category, p, ok := CategoryPriceOf(o)
	if !ok {
		return
	}
	var b strings.Builder
	b.WriteString(category)
	for _, f := range p.Offers {
		fmt.Fprintf(&b, "|%s,%s,%s", f.Network, f.Asset, f.Amount)
	}
	m, sig := w.memory(o.URL), b.String()
	if w.coalesce > 0 && m.cat == sig && o.ObservedAt.Sub(m.catAt) >= 0 && o.ObservedAt.Sub(m.catAt) < w.coalesce {
		return
	}
	m.cat, m.catAt = sig, o.ObservedAt
	if err := cs.PutCategoryPrice(ctx, category, p, w.keep); err != nil {
		m.cat = ""
		w.log.Warn("index writer: category price not written", "url", o.URL, "category", category, "error", err.Error())
	}
}

// categoryOf is the newest category url's seller declared: remembered from this writer's writes, else read
// from the store (another replica saw the 402). "" when none.
func (w *Writer) categoryOf(ctx context.Context, url string) string {
	if c := w.memory(url).category; c != "" {
		return c
	}
	obs, err := w.st.Observations(ctx, url)
	if err != nil {
		return ""
	}
	var newest store.Observation
	for _, x := range obs {
		if x.Category != "" && !x.ObservedAt.Before(newest.ObservedAt) {
			newest = x
		}
	}
	return newest.Category
}

// putSitePayees records the payees o names in its site's payee record (store.SitePayees), when the store
// keeps one; an entry repeating the last one written for its site and key (with the same costliness) within
// the coalescing interval is not written again. A failure is logged: the site check then compares with the
// record as it was (a missing entry makes a payee look new, never established).
func (w *Writer) putSitePayees(ctx context.Context, o store.Observation) {
	sp := w.sitePayees
	if sp == nil {
		return
	}
	site, entries := SitePayeesOf(o)
	for _, e := range entries {
		k := site + "\x00" + e.Key()
		if l, ok := w.sites[k]; ok && w.coalesce > 0 && (l.sig == "costly" || !e.Costly) &&
			e.LastAt.Sub(l.at) >= 0 && e.LastAt.Sub(l.at) < w.coalesce {
			continue
		}
		if err := sp.PutSitePayee(ctx, site, e, w.keep); err != nil {
			delete(w.sites, k)
			w.log.Warn("index writer: site payee not written", "site", site, "pay_to", e.PayTo, "error", err.Error())
			continue
		}
		if len(w.sites) >= maxCoalesceURLs {
			clear(w.sites)
		}
		sig := "free"
		if e.Costly {
			sig = "costly"
		}
		w.sites[k] = lastWrite{sig: sig, at: e.LastAt}
	}
}

// begin tells the cache (WriterOptions.Writing) that url is being written; the func it returns ends that.
func (w *Writer) begin(url string) (done func()) {
	if w.writing == nil {
		return func() {}
	}
	return w.writing(url)
}

// repeats reports whether o repeats the last observation of its method and source written for its URL within
// the coalescing interval, and otherwise remembers o as that last one. A change of payee, price, status or
// source is never coalesced, so every change reaches the store. Neither is a failed probe (require_live
// counts consecutive ones) nor anything after an unusable observation of the URL: the next sign of life, from
// any source, is written, so a failure is never followed by a coalesced-away recovery.
func (w *Writer) repeats(o store.Observation) bool {
	if w.coalesce <= 0 {
		return false
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d|%t|%s|%s", o.Status, o.Usable, o.Category, o.Error)
	for _, off := range o.Offers {
		fmt.Fprintf(&b, "|%s,%s,%s,%s,%s", off.Scheme, off.Network, off.Asset, off.Amount, off.PayTo)
	}
	if p := o.Paid; p != nil {
		fmt.Fprintf(&b, "|paid:%s,%s,%s,%s,%s", p.Scheme, p.Network, p.Asset, p.Amount, p.PayTo)
	}
	sig, kind := b.String(), o.Method+"|"+o.Source
	m := w.memory(o.URL)
	l, ok := m.last[kind]
	if o.Usable && ok && l.sig == sig && o.ObservedAt.Sub(l.at) >= 0 && o.ObservedAt.Sub(l.at) < w.coalesce {
		return true
	}
	if !o.Usable || len(m.last) >= maxKindsPerURL {
		clear(m.last)
	}
	m.last[kind] = lastWrite{sig: sig, at: o.ObservedAt}
	return false
}

// memory is the writer's memory of url's writes, created when missing.
func (w *Writer) memory(url string) *urlMemory {
	m := w.last[url]
	if m == nil {
		if len(w.last) >= maxCoalesceURLs {
			clear(w.last)
		}
		m = &urlMemory{last: map[string]lastWrite{}}
		w.last[url] = m
	}
	return m
}

// dedupeMetadata drops o's metadata when it repeats the last metadata written for its URL (its category is
// kept): the seller's bazaar document is usually the same on every 402, and storing it once per change
// keeps an observation a few hundred bytes.
func (w *Writer) dedupeMetadata(o *store.Observation) {
	if len(o.Metadata) == 0 {
		return
	}
	m := w.memory(o.URL)
	if m.meta == string(o.Metadata) {
		o.Metadata = nil
		return
	}
	m.meta = string(o.Metadata)
}

// shorten cuts s to at most n bytes on a rune boundary, marking the cut.
func shorten(s string, n int) string {
	const mark = "…"
	cut := n - len(mark)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + mark
}
