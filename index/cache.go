package index

import (
	"context"

	"sync"
	"time"

	"github.com/payguard/payguard/store"
)

// DefaultCacheTTL is how long a Cache keeps an endpoint's observations before reading them again. Writes
// through this process's Writer invalidate at once; another replica's writes are seen within the TTL. A
// stale read can only miss the newest observations, so the payee rule still compares with a payee the
// endpoint really named.
const DefaultCacheTTL = 2 * time.Second

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
	gen     map[string]uint64 // invalidation generation per URL, so a read racing a write is not cached stale
}

type cacheEntry struct {
	obs []store.Observation
	at  time.Time
	sum map[string]Summary // derived per method ("" = all), filled on demand
}

// NewCache wraps r; ttl <= 0 means DefaultCacheTTL.
func NewCache(r Reader, ttl time.Duration) *Cache {
	if ttl <= 0 {
		ttl = DefaultCacheTTL
	}
	return &Cache{r: r, ttl: ttl, now: time.Now, entries: map[string]cacheEntry{}, gen: map[string]uint64{}}
}

// Observations implements Reader.
func (c *Cache) Observations(ctx context.Context, url string) ([]store.Observation, error) {
	now := c.now()
	c.mu.Lock()
	e, ok := c.entries[url]
	g := c.gen[url]
	c.mu.Unlock()
	if ok && now.Sub(e.at) < c.ttl && now.Sub(e.at) >= 0 {
		return e.obs, nil
	}
	obs, err := c.r.Observations(ctx, url)
	if err != nil {
		return nil, err // errors are not cached: the next decision asks again
	}
	c.mu.Lock()
	if c.gen[url] == g { // no write since the read began
		if len(c.entries) >= maxCachedURLs {
			clear(c.entries)
			clear(c.gen)
		}
		c.entries[url] = cacheEntry{obs: obs, at: now}
	}
	c.mu.Unlock()
	return obs, nil
}

// Summary implements Summarizer: url's summary for method as Summarize derives it, computed once per cache
// entry (the derivation, not only the decoding, is what a busy endpoint's 402s share).
func (c *Cache) Summary(ctx context.Context, url, method string, now time.Time, maxAge time.Duration) (Summary, error) {
	obs, err := c.Observations(ctx, url)
	if err != nil {
		return Summary{}, err
	}
	key := method + "\x00" + maxAge.String()
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
			e.sum = map[string]Summary{}
			c.entries[url] = e
		}
		e.sum[key] = s
	}
	c.mu.Unlock()
	return s, nil
}

// Invalidate drops url's entry (the Writer calls it after writing url's observations).
func (c *Cache) Invalidate(url string) {
	c.mu.Lock()
	delete(c.entries, url)
	c.gen[url]++
	c.mu.Unlock()
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
// read and derived. Observations of method are used; when there are none, those of every method (the
// payee or price of another method is still this URL's).
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
	}
	return s
}
