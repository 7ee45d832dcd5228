package index

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/payguard/payguard/store"
	"github.com/payguard/payguard/store/memory"
)

// blockingStore holds every write until released: the store is slow or down.
type blockingStore struct {
	*memory.Store
	release chan struct{}
	once    sync.Once
}

func (b *blockingStore) PutObservation(ctx context.Context, o store.Observation, keep store.Retention) error {
	<-b.release
	return b.Store.PutObservation(ctx, o, keep)
}

// A store that does not answer never slows Observe: the queue fills, the rest is dropped and counted, and what
// was queued is written once the store answers.
func TestWriterDropsWhenFullAndNeverBlocks(t *testing.T) {
	st := &blockingStore{Store: memory.New(), release: make(chan struct{})}
	reg := prometheus.NewRegistry()
	w := NewWriter(st, WriterOptions{Queue: 4, Registry: reg})
	done := make(chan struct{})
	go func() {
		for i := 0; i < 100; i++ {
			w.Observe(store.Observation{URL: target, Method: "GET", ObservedAt: t0.Add(time.Duration(i) * time.Second), Source: store.SourceChallenge})
		}
		close(done)
	}()
	<-done // returns although the store answers nothing: Observe never waits for it
	dropped := value(t, w.dropped.WithLabelValues("queue_full"))
	// The writer goroutine may hold one batch (up to the queue's 4 plus the one it took) while blocked.
	if dropped < 100-4-maxBatch || dropped > 96 {
		t.Fatalf("dropped %v of 100 with a queue of 4", dropped)
	}
	close(st.release)
	w.Close()
	written := value(t, w.written.WithLabelValues(store.SourceChallenge))
	if written+dropped != 100 {
		t.Fatalf("written %v + dropped %v != 100", written, dropped)
	}
	obs, _ := st.Observations(context.Background(), target)
	if float64(len(obs)) != written {
		t.Fatalf("store holds %d, writer counted %v", len(obs), written)
	}
	w.Observe(store.Observation{URL: target, Method: "GET", ObservedAt: t0})
	if got := value(t, w.dropped.WithLabelValues("closed")); got != 1 {
		t.Fatalf("observation after Close: dropped(closed) = %v", got)
	}
}

// value reads a counter (prometheus/testutil needs a module this repository does not carry).
func value(t *testing.T, m prometheus.Counter) float64 {
	t.Helper()
	var d dto.Metric
	if err := m.Write(&d); err != nil {
		t.Fatal(err)
	}
	return d.GetCounter().GetValue()
}

// Repeats within the coalescing interval are not written again; a changed payee always is.
func TestWriterCoalescesRepeatsButNeverChanges(t *testing.T) {
	st := memory.New()
	w := NewWriter(st, WriterOptions{Coalesce: 10 * time.Minute})
	a := seen(0, offer("base", payA, "10000"))
	for i := 0; i < 5; i++ {
		a.ObservedAt = t0.Add(time.Duration(i) * time.Minute)
		w.Observe(a)
	}
	b := seen(6*time.Minute, offer("base", payB, "10000"))
	w.Observe(b)
	a.ObservedAt = t0.Add(7 * time.Minute)
	w.Observe(a) // back to A: a change again
	a.ObservedAt = t0.Add(30 * time.Minute)
	w.Observe(a) // past the interval
	w.Close()
	obs, _ := st.Observations(context.Background(), target)
	if len(obs) != 4 || value(t, w.coalesced) != 4 {
		t.Fatalf("written %d (want 4: A, B, A, A later), coalesced %v", len(obs), value(t, w.coalesced))
	}
}

type countingReader struct {
	st    store.Endpoints
	reads int
	fail  error
}

func (c *countingReader) Observations(ctx context.Context, url string) ([]store.Observation, error) {
	c.reads++
	if c.fail != nil {
		return nil, c.fail
	}
	return c.st.Observations(ctx, url)
}

// The cache reads a URL once per TTL, a local write invalidates it at once, and errors are never cached.
func TestCacheTTLInvalidationAndErrors(t *testing.T) {
	st := memory.New()
	r := &countingReader{st: st}
	c := NewCache(r, time.Minute)
	now := t0
	c.now = func() time.Time { return now }
	w := NewWriter(st, WriterOptions{Written: c.Invalidate})
	ctx := context.Background()
	for i := 0; i < 3; i++ {
		if obs, _ := c.Observations(ctx, target); len(obs) != 0 {
			t.Fatal("observations from nowhere")
		}
	}
	if r.reads != 1 {
		t.Fatalf("%d reads within the TTL, want 1", r.reads)
	}
	w.Observe(seen(0, offer("base", payA, "10000")))
	w.Close() // written, and the cache invalidated
	if obs, _ := c.Observations(ctx, target); len(obs) != 1 || r.reads != 2 {
		t.Fatalf("after a local write: %d observations, %d reads", len(obs), r.reads)
	}
	now = now.Add(2 * time.Minute)
	c.Observations(ctx, target)
	if r.reads != 3 {
		t.Fatalf("after the TTL: %d reads, want 3", r.reads)
	}
	now = now.Add(2 * time.Minute)
	r.fail = context.DeadlineExceeded
	if _, err := c.Observations(ctx, target); err == nil {
		t.Fatal("an error read was answered from the cache")
	}
	r.fail = nil
	if obs, err := c.Observations(ctx, target); err != nil || len(obs) != 1 || r.reads != 5 {
		t.Fatalf("after an error: %v %d observations, %d reads", err, len(obs), r.reads)
	}
}
