package domain

import (
	"container/list"
	"context"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/singleflight"
)

// cache is a bounded, least-recently-used map whose entries expire, with one fetch in flight per key:
// concurrent misses for the same key share a single upstream lookup.
type cache[V any] struct {
	max   int
	now   func() time.Time
	group singleflight.Group

	mu    sync.Mutex
	order *list.List // front = most recently used; values are *cacheEntry[V]
	items map[string]*list.Element

	hits, fetches atomic.Uint64
	waiters       atomic.Int64 // callers waiting on a flight; lets tests prove they share one
}

type cacheEntry[V any] struct {
	key     string
	val     V
	expires time.Time
}

func newCache[V any](max int, now func() time.Time) *cache[V] {
	return &cache[V]{max: max, now: now, order: list.New(), items: make(map[string]*list.Element)}
}

// get returns the cached value for key, or runs fetch once for all concurrent callers and keeps its value
// for the TTL fetch returns (0 or less: not kept). fetch runs detached from the caller's cancellation, so
// one impatient caller does not fail the others that share it; it must bound its own time. get returns
// ctx's error when ctx ends before the value is there.
func (c *cache[V]) get(ctx context.Context, key string, fetch func(context.Context) (V, time.Duration)) (V, error) {
	if v, ok := c.lookup(key); ok {
		c.hits.Add(1)
		return v, nil
	}
	ch := c.group.DoChan(key, func() (any, error) {
		// Another caller may have stored the value between our miss and this flight.
		if v, ok := c.lookup(key); ok {
			return v, nil
		}
		c.fetches.Add(1)
		v, ttl := fetch(context.WithoutCancel(ctx))
		if ttl > 0 {
			c.store(key, v, ttl)
		}
		return v, nil
	})
	c.waiters.Add(1)
	defer c.waiters.Add(-1)
	select {
	case r := <-ch:
		return r.Val.(V), nil
	case <-ctx.Done():
		var zero V
		return zero, ctx.Err()
	}
}

// peek returns a fresh cached value without fetching.
func (c *cache[V]) peek(key string) (V, bool) {
	v, ok := c.lookup(key)
	if ok {
		c.hits.Add(1)
	}
	return v, ok
}

func (c *cache[V]) lookup(key string) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.items[key]
	if !ok {
		var zero V
		return zero, false
	}
	e := el.Value.(*cacheEntry[V])
	if !c.now().Before(e.expires) {
		c.order.Remove(el)
		delete(c.items, key)
		var zero V
		return zero, false
	}
	c.order.MoveToFront(el)
	return e.val, true
}

func (c *cache[V]) store(key string, v V, ttl time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	exp := c.now().Add(ttl)
	if el, ok := c.items[key]; ok {
		e := el.Value.(*cacheEntry[V])
		e.val, e.expires = v, exp
		c.order.MoveToFront(el)
		return
	}
	c.items[key] = c.order.PushFront(&cacheEntry[V]{key: key, val: v, expires: exp})
	for c.order.Len() > c.max {
		oldest := c.order.Back()
		c.order.Remove(oldest)
		delete(c.items, oldest.Value.(*cacheEntry[V]).key)
	}
}
