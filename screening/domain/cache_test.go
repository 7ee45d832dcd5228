package domain

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/payguard/payguard/internal/testutil"
)

func TestCacheSingleFlight(t *testing.T) {
	c := newCache[int](10, time.Now)
	release := make(chan struct{})
	var calls atomic.Int32
	fetch := func(context.Context) (int, time.Duration) {
		calls.Add(1)
		<-release
		return 42, 0 // not stored: only the flight can share it
	}
	const n = 8
	var wg sync.WaitGroup
	got := make([]int, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i], _ = c.get(context.Background(), "k", fetch)
		}()
	}
	// Release only when every caller is waiting on a flight; without single-flight each would fetch.
	testutil.Eventually(t, 10*time.Second, func() bool { return c.waiters.Load() == n }, "%d callers waiting on the flight", n)
	close(release)
	wg.Wait()
	if calls.Load() != 1 {
		t.Fatalf("%d fetches for %d concurrent callers, want 1", calls.Load(), n)
	}
	for i, v := range got {
		if v != 42 {
			t.Fatalf("caller %d got %d", i, v)
		}
	}
}

func TestCacheCallerCancelDoesNotFailOthers(t *testing.T) {
	c := newCache[string](10, time.Now)
	release := make(chan struct{})
	var fetchCtxErr atomic.Value
	fetch := func(ctx context.Context) (string, time.Duration) {
		<-release
		fetchCtxErr.Store(ctx.Err() == nil)
		return "v", time.Hour
	}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { _, err := c.get(ctx, "k", fetch); errc <- err }()
	testutil.Eventually(t, 10*time.Second, func() bool { return c.waiters.Load() == 1 }, "the caller waiting on the flight")
	cancel()
	if err := <-errc; err == nil {
		t.Fatal("a cancelled caller got no error")
	}
	close(release)
	// The flight goes on for everyone else and its value is stored.
	v, err := c.get(context.Background(), "k", fetch)
	if err != nil || v != "v" {
		t.Fatalf("get = %q, %v", v, err)
	}
	if ok, _ := fetchCtxErr.Load().(bool); !ok {
		t.Fatal("the fetch saw the first caller's cancellation")
	}
}

func TestCacheBoundedLRU(t *testing.T) {
	c := newCache[int](3, time.Now)
	var fetches int
	get := func(k string) {
		c.get(context.Background(), k, func(context.Context) (int, time.Duration) { fetches++; return 1, time.Hour })
	}
	for i := range 3 {
		get(strconv.Itoa(i))
	}
	get("0") // 0 is now the most recently used; 1 is the oldest
	get("3") // evicts 1
	if c.len() != 3 {
		t.Fatalf("len %d, want 3", c.len())
	}
	before := fetches
	get("0")
	get("2")
	get("3")
	if fetches != before {
		t.Fatalf("recent entries were evicted")
	}
	get("1")
	if fetches != before+1 {
		t.Fatalf("the least recently used entry was not the one evicted")
	}
}

func TestCacheExpiry(t *testing.T) {
	now := time.Unix(0, 0)
	c := newCache[int](10, func() time.Time { return now })
	n := 0
	fetch := func(context.Context) (int, time.Duration) { n++; return n, time.Minute }
	if v, _ := c.get(context.Background(), "k", fetch); v != 1 {
		t.Fatal(v)
	}
	now = now.Add(59 * time.Second)
	if v, _ := c.get(context.Background(), "k", fetch); v != 1 {
		t.Fatalf("expired early: %d", v)
	}
	now = now.Add(time.Second)
	if v, _ := c.get(context.Background(), "k", fetch); v != 2 {
		t.Fatalf("not expired at the TTL: %d", v)
	}
}
