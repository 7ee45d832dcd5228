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

// Invalidate drops url's entry (the Writer calls it after writing url's observations).
func (c *Cache) Invalidate(url string) {
	c.mu.Lock()
	delete(c.entries, url)
	c.gen[url]++
	c.mu.Unlock()
}
