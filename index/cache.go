package index

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/payguard/payguard/store"
)

// DefaultCacheTTL is how long a Cache keeps an endpoint's observations before reading them again. Writes
// through this process's Writer invalidate at once; another replica's writes are seen within the TTL. A
// stale read can only miss the newest observations, so the payee rule still compares with a payee the
// endpoint really named.
const DefaultCacheTTL = 2 * time.Second

// StaleFor is how long past its TTL an entry may still answer while one background read refreshes it, so
// that an endpoint asked at least this often never waits for the store on the request path (reading and
// decoding a full history of 256 observations costs about a millisecond of CPU; docs/benchmarks/index.md).
// Past it the read is synchronous again, and its error, if any, is the caller's. This process's own writes
// still invalidate at once.
const StaleFor = 30 * time.Second

// refreshTimeout bounds a background refresh.
const refreshTimeout = 5 * time.Second

// maxCachedURLs bounds the cache; past it, it starts over.
const maxCachedURLs = 10_000

// Cache is a Reader that keeps each URL's decoded observations for a short TTL, so that a busy endpoint's
// history is read and decoded from the store about once per TTL rather than on every 402. Entries are
// shared read-only: callers must not modify the returned slices.
type Cache struct {
	r   Reader
	ttl time.Duration
	now func() time.Time

	mu      sync.Mutex
	entries map[string]cacheEntry
	gen     map[string]uint64    // invalidation generation per URL, so a read racing a write is not cached stale
	writing map[string]int       // writes of a URL under way (Writing): nothing of it is cached meanwhile
	cats    map[string]catEntry  // category price samples, by category (CategoryPrices)
	sites   map[string]siteEntry // site payee records, by site (SitePayees)
}

type siteEntry struct {
	entries    []store.SitePayee
	at         time.Time
	refreshing bool
}

type catEntry struct {
	sample     []store.CategoryPrice
	at         time.Time
	refreshing bool
	derived    map[string]SitePrices // per network, asset and maxAge, filled on demand
}

// summaryKey names one derivation of an entry's observations.
type summaryKey struct {
	method string
	maxAge time.Duration
}

type cacheEntry struct {
	obs        []store.Observation
	at         time.Time
	sum        map[summaryKey]Summary // derived per method ("" = all) and maxAge, filled on demand
	refreshing bool                   // a background read of this URL is under way
}

// NewCache wraps r; ttl <= 0 means DefaultCacheTTL.
func NewCache(r Reader, ttl time.Duration) *Cache {
	if ttl <= 0 {
		ttl = DefaultCacheTTL
	}
	return &Cache{r: r, ttl: ttl, now: time.Now, entries: map[string]cacheEntry{}, gen: map[string]uint64{}, writing: map[string]int{},
		cats: map[string]catEntry{}, sites: map[string]siteEntry{}}
}

// Observations implements Reader.
func (c *Cache) Observations(ctx context.Context, url string) ([]store.Observation, error) {
	now := c.now()
	c.mu.Lock()
	e, ok := c.entries[url]
	g := c.gen[url]
	age := now.Sub(e.at)
	if ok && age >= 0 && age < c.ttl {
		c.mu.Unlock()
		return e.obs, nil
	}
	if ok && age >= 0 && age < c.ttl+StaleFor {
		// Stale but recent: answer with it, and let one background read refresh it.
		if !e.refreshing {
			e.refreshing = true
			c.entries[url] = e
			go c.refresh(url, g)
		}
		c.mu.Unlock()
		return e.obs, nil
	}
	c.mu.Unlock()
	return c.read(ctx, url, g, now)
}

// read reads url from the store and caches it unless a write happened since generation g.
func (c *Cache) read(ctx context.Context, url string, g uint64, now time.Time) ([]store.Observation, error) {
	obs, err := c.r.Observations(ctx, url)
	if err != nil {
		return nil, err // errors are not cached: the next decision asks again
	}
	c.mu.Lock()
	if c.gen[url] == g && c.writing[url] == 0 { // no write since the read began, none under way
		if len(c.entries) >= maxCachedURLs {
			clear(c.entries)
			clear(c.gen)
		}
		c.entries[url] = cacheEntry{obs: obs, at: now}
	}
	c.mu.Unlock()
	return obs, nil
}

// refresh is the background read of a stale entry. On an error the stale entry stays (until StaleFor
// runs out and a synchronous read reports the error), marked as no longer refreshing.
func (c *Cache) refresh(url string, g uint64) {
	ctx, cancel := context.WithTimeout(context.Background(), refreshTimeout)
	defer cancel()
	if _, err := c.read(ctx, url, g, c.now()); err != nil {
		c.mu.Lock()
		if e, ok := c.entries[url]; ok && e.refreshing {
			e.refreshing = false
			c.entries[url] = e
		}
		c.mu.Unlock()
	}
}

// Summary implements Summarizer: url's summary for method as Summarize derives it, computed once per cache
// entry (the derivation, not only the decoding, is what a busy endpoint's 402s share).
func (c *Cache) Summary(ctx context.Context, url, method string, now time.Time, maxAge time.Duration) (Summary, error) {
	obs, err := c.Observations(ctx, url)
	if err != nil {
		return Summary{}, err
	}
	key := summaryKey{method, maxAge}
	c.mu.Lock()
	e, ok := c.entries[url]
	if ok && len(e.obs) == len(obs) && (len(obs) == 0 || &e.obs[0] == &obs[0]) {
		if s, ok := e.sum[key]; ok {
			c.mu.Unlock()
			return s, nil
		}
	}
	c.mu.Unlock()
	s := derive(url, obs, method, now, maxAge)
	c.mu.Lock()
	if e, ok := c.entries[url]; ok && len(e.obs) == len(obs) && (len(obs) == 0 || &e.obs[0] == &obs[0]) {
		if e.sum == nil {
			e.sum = map[summaryKey]Summary{}
			c.entries[url] = e
		}
		e.sum[key] = s
	}
	c.mu.Unlock()
	return s, nil
}

// Invalidate drops url's entry.
func (c *Cache) Invalidate(url string) {
	c.mu.Lock()
	delete(c.entries, url)
	c.gen[url]++
	c.mu.Unlock()
}

// Writing is WriterOptions.Writing: from now until done is called url has no entry and none is taken, so a
// read during the write goes to the store, and once the store holds the new observation no read through the
// cache answers without it (invalidating only after the write left a window in which the store had it and the
// cache still answered the older history).
func (c *Cache) Writing(url string) (done func()) {
	site := siteKey(url)
	c.mu.Lock()
	c.writing[url]++
	c.writing[site]++
	delete(c.entries, url)
	delete(c.sites, site)
	c.gen[url]++
	c.gen[site]++
	c.mu.Unlock()
	return func() {
		c.mu.Lock()
		for _, k := range []string{url, site} {
			if c.writing[k]--; c.writing[k] <= 0 {
				delete(c.writing, k)
			}
			c.gen[k]++
		}
		delete(c.entries, url)
		delete(c.sites, site)
		c.mu.Unlock()
	}
}

// siteKey is the key under which the cache fences url's site record (gen and writing share the URL maps;
// a URL never begins with "site:").
func siteKey(url string) string { return "site:" + SiteOf(url) }

// SitePayeeReader reads a site's payee record (store.SitePayees and Cache satisfy it).
type SitePayeeReader interface {
	SitePayees(ctx context.Context, site string) ([]store.SitePayee, error)
}

// ErrNoSitePayees is SitePayees' error when the store keeps no site payee record.
var ErrNoSitePayees = errors.New("index: the store keeps no site payee record")

// SitePayees implements SitePayeeReader like Observations: a site's record is read about once per TTL and
// answered stale (for up to StaleFor) while one background read refreshes it; this process's own writes
// (Writing) drop it at once, so a payee this replica recorded is never missing from what it reads. Another
// replica's new payees are seen within TTL+StaleFor: until then a payee that replica recorded may look new
// here (held), and an older payee it recorded first may be missing (a site first seen within that time).
func (c *Cache) SitePayees(ctx context.Context, site string) ([]store.SitePayee, error) {
	sr, ok := c.r.(SitePayeeReader)
	if !ok {
		return nil, ErrNoSitePayees
	}
	// The key written into a buffer of the stack: a map read by string(bytes) copies nothing.
	var kb [128]byte
	key := append(append(kb[:0], "site:"...), site...)
	now := c.now()
	c.mu.Lock()
	e, ok := c.sites[string(key)]
	g := c.gen[string(key)]
	age := now.Sub(e.at)
	if ok && age >= 0 && age < c.ttl {
		c.mu.Unlock()
		return e.entries, nil
	}
	if ok && age >= 0 && age < c.ttl+StaleFor {
		if !e.refreshing {
			e.refreshing = true
			c.sites[string(key)] = e
			go func() {
				ctx, cancel := context.WithTimeout(context.Background(), refreshTimeout)
				defer cancel()
				c.readSite(ctx, sr, site, g, c.now())
			}()
		}
		c.mu.Unlock()
		return e.entries, nil
	}
	c.mu.Unlock()
	return c.readSite(ctx, sr, site, g, now)
}

func (c *Cache) readSite(ctx context.Context, sr SitePayeeReader, site string, g uint64, now time.Time) ([]store.SitePayee, error) {
	key := "site:" + site
	entries, err := sr.SitePayees(ctx, site)
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil {
		if e, ok := c.sites[key]; ok && e.refreshing {
			e.refreshing = false
			c.sites[key] = e
		}
		return nil, err
	}
	if c.gen[key] == g && c.writing[key] == 0 {
		if len(c.sites) >= maxCachedURLs {
			clear(c.sites)
		}
		c.sites[key] = siteEntry{entries: entries, at: now}
	}
	return entries, nil
}

// Summarizer derives an endpoint's summary itself (Cache does, once per entry).
type Summarizer interface {
	Summary(ctx context.Context, url, method string, now time.Time, maxAge time.Duration) (Summary, error)
}

// Reader reads one URL's observations (store.Endpoints satisfies it).
type Reader interface {
	Observations(ctx context.Context, url string) ([]store.Observation, error)
}

// Summarize is url's summary for method from r: through r's own Summary when it has one (Cache), else
// read and derived. Observations of method are used; when there are none, those of every method for the
// payee and price history (the payee or price of another method is still this URL's), but never for
// liveness: the prober sends GET, and a POST-only endpoint answers a GET with 404 or 405, so failed probes
// of another method say nothing about whether this method is live (require_live then has no evidence).
func Summarize(ctx context.Context, r Reader, url, method string, now time.Time, maxAge time.Duration) (Summary, error) {
	if s, ok := r.(Summarizer); ok {
		return s.Summary(ctx, url, method, now, maxAge)
	}
	obs, err := r.Observations(ctx, url)
	if err != nil {
		return Summary{}, err
	}
	return derive(url, obs, method, now, maxAge), nil
}

func derive(url string, obs []store.Observation, method string, now time.Time, maxAge time.Duration) Summary {
	s := Derive(url, obs, method, now, maxAge)
	if s.Observations == 0 && method != "" {
		s = Derive(url, obs, "", now, maxAge)
		s.Live, s.ConsecutiveFailedProbes, s.LastProbeError = nil, 0, ""
	}
	return s
}

// ErrNoCategorySample is CategoryPrices' error when the store keeps no category price sample.
var ErrNoCategorySample = errors.New("index: the store keeps no category price sample")

// CategoryPrices implements CategoryReader like Observations: a category's sample is read from the store
// about once per TTL, answered stale (for up to StaleFor) while one background read refreshes it, so a
// decision does not wait for the store. Other endpoints' new prices are therefore seen within TTL+StaleFor;
// that is the sample's only staleness, and it can only miss the newest entries.
func (c *Cache) CategoryPrices(ctx context.Context, category string) ([]store.CategoryPrice, error) {
	cr, ok := c.r.(CategoryReader)
	if !ok {
		return nil, ErrNoCategorySample
	}
	now := c.now()
	c.mu.Lock()
	e, ok := c.cats[category]
	age := now.Sub(e.at)
	if ok && age >= 0 && age < c.ttl {
		c.mu.Unlock()
		return e.sample, nil
	}
	if ok && age >= 0 && age < c.ttl+StaleFor {
		if !e.refreshing {
			e.refreshing = true
			c.cats[category] = e
			go func() {
				ctx, cancel := context.WithTimeout(context.Background(), refreshTimeout)
				defer cancel()
				c.readCategory(ctx, cr, category, c.now())
			}()
		}
		c.mu.Unlock()
		return e.sample, nil
	}
	c.mu.Unlock()
	return c.readCategory(ctx, cr, category, now)
}

func (c *Cache) readCategory(ctx context.Context, cr CategoryReader, category string, now time.Time) ([]store.CategoryPrice, error) {
	sample, err := cr.CategoryPrices(ctx, category)
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil {
		if e, ok := c.cats[category]; ok && e.refreshing {
			e.refreshing = false
			c.cats[category] = e
		}
		return nil, err
	}
	if len(c.cats) >= maxCachedURLs {
		clear(c.cats)
	}
	c.cats[category] = catEntry{sample: sample, at: now}
	return sample, nil
}

// SitePrices is DeriveSitePrices of category's sample, computed once per cache entry (deriving a full
// sample costs far more than a decision; docs/benchmarks/index.md).
func (c *Cache) SitePrices(ctx context.Context, category, network, asset string, now time.Time, maxAge time.Duration) (SitePrices, error) {
	sample, err := c.CategoryPrices(ctx, category)
	if err != nil {
		return nil, err
	}
	key := network + "\x00" + asset + "\x00" + maxAge.String()
	same := func(e catEntry) bool {
		return len(e.sample) == len(sample) && (len(sample) == 0 || &e.sample[0] == &sample[0])
	}
	c.mu.Lock()
	if e, ok := c.cats[category]; ok && same(e) {
		if d, ok := e.derived[key]; ok {
			c.mu.Unlock()
			return d, nil
		}
	}
	c.mu.Unlock()
	d := DeriveSitePrices(sample, network, asset, now, maxAge)
	c.mu.Lock()
	if e, ok := c.cats[category]; ok && same(e) {
		if e.derived == nil {
			e.derived = map[string]SitePrices{}
			c.cats[category] = e
		}
		if len(e.derived) < 64 {
			e.derived[key] = d
		}
	}
	c.mu.Unlock()
	return d, nil
}
