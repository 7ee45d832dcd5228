package index

import (
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/payguard/payguard/store"
	"github.com/payguard/payguard/store/memory"
)

// A flood of 402s from many goroutines while the store does not answer (attack2, the queue a slice since
// issue 36's latency slice): the queue never holds more than WriterOptions.Queue, and the writer at most as
// many more in hand, as the channel it replaced; everything else is dropped and counted, and what was kept
// is written once the store answers.
func TestWriterFloodStaysBounded(t *testing.T) {
	const queue, senders, each = 64, 16, 5000
	st := &blockingStore{Store: memory.New(), release: make(chan struct{})}
	w := NewWriter(st, WriterOptions{Queue: queue, Registry: prometheus.NewRegistry(), Gather: -1})
	var wg sync.WaitGroup
	var mu sync.Mutex
	most := 0
	for g := 0; g < senders; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				w.Observe(store.Observation{URL: target, Method: "GET", ObservedAt: t0.Add(time.Duration(i) * time.Millisecond), Source: store.SourceChallenge})
				w.mu.Lock()
				n := len(w.pending)
				w.mu.Unlock()
				mu.Lock()
				most = max(most, n)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if most > queue {
		t.Fatalf("the queue held %d observations, bound %d", most, queue)
	}
	dropped := value(t, w.dropped.WithLabelValues("queue_full"))
	if dropped < senders*each-2*queue {
		t.Fatalf("dropped %v of %d with a queue of %d: more than twice the queue kept", dropped, senders*each, queue)
	}
	close(st.release)
	w.Close()
	written := value(t, w.written.WithLabelValues(store.SourceChallenge))
	if written+dropped != senders*each {
		t.Fatalf("written %v + dropped %v != %d", written, dropped, senders*each)
	}
}
