package index

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/payguard/payguard/internal/testutil"
	"github.com/payguard/payguard/store"
	"github.com/payguard/payguard/store/memory"
)

// blockingStore holds every write until released: the store is slow or down.
type blockingStore struct {
	*memory.Store
	release chan struct{}
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

// An agent that pays every time makes the proxy observe a 402, then the paid response, then a 402 again:
// repeats of each are coalesced although the two sources alternate (the coalescing memory is per URL,
// method and source, not per URL, where every observation differed from the one before).
func TestWriterCoalescesAlternatingSources(t *testing.T) {
	st := memory.New()
	w := NewWriter(st, WriterOptions{Coalesce: time.Hour})
	a := offer("base", payA, "10000")
	for i := 0; i < 10; i++ {
		at := time.Duration(i) * time.Minute
		w.Observe(seen(at, a))
		w.Observe(FromPaid(target, "GET", a, 200, true, t0.Add(at+time.Second)))
	}
	w.Close()
	obs, _ := st.Observations(context.Background(), target)
	if len(obs) != 2 || value(t, w.coalesced) != 18 {
		t.Fatalf("written %d (want 2: the first 402 and the first paid response), coalesced %v", len(obs), value(t, w.coalesced))
	}
}

// Every failed probe is written, however alike: require_live counts three consecutive ones, and with the
// default probe interval (15m) under the default coalescing (1h) coalesced failures took two hours to count
// to three instead of three probe rounds.
func TestWriterNeverCoalescesFailedProbes(t *testing.T) {
	st := memory.New()
	w := NewWriter(st, WriterOptions{Coalesce: time.Hour})
	for i := 0; i < 3; i++ {
		w.Observe(store.Observation{URL: target, Method: "GET", ObservedAt: t0.Add(time.Duration(i) * 15 * time.Minute),
			Source: store.SourceProbe, Error: "dial tcp: connection refused"})
	}
	w.Close()
	obs, _ := st.Observations(context.Background(), target)
	if len(obs) != 3 {
		t.Fatalf("written %d failed probes of 3", len(obs))
	}
	if s := Derive(target, obs, "GET", t0.Add(time.Hour), 0); s.ConsecutiveFailedProbes != 3 || s.Live == nil || *s.Live {
		t.Fatalf("after three failed probes: %+v", s)
	}
}

// A 402 the proxy decodes after failed probes is written although it repeats the 402 before them: it is
// the sign of life that resets require_live's count, and coalescing it away would let a later failure
// complete three "consecutive" ones.
func TestWriterWritesTheRecoveryAfterAFailure(t *testing.T) {
	st := memory.New()
	w := NewWriter(st, WriterOptions{Coalesce: time.Hour})
	a := offer("base", payA, "10000")
	failed := func(at time.Duration) store.Observation {
		return store.Observation{URL: target, Method: "GET", ObservedAt: t0.Add(at), Source: store.SourceProbe, Error: "timeout"}
	}
	w.Observe(seen(0, a))
	w.Observe(failed(10 * time.Minute))
	w.Observe(failed(20 * time.Minute))
	w.Observe(seen(30*time.Minute, a)) // the endpoint answered the proxy
	w.Observe(failed(40 * time.Minute))
	w.Close()
	obs, _ := st.Observations(context.Background(), target)
	if len(obs) != 5 {
		t.Fatalf("written %d of 5", len(obs))
	}
	if s := Derive(target, obs, "GET", t0.Add(time.Hour), 0); s.ConsecutiveFailedProbes != 1 {
		t.Fatalf("consecutive failed probes %d, want 1 (the 402 at 30m answered)", s.ConsecutiveFailedProbes)
	}
}

// A failure's description longer than the store's bound is shortened, not refused: the failed probe is still
// evidence for require_live.
func TestWriterShortensLongErrors(t *testing.T) {
	st := memory.New()
	w := NewWriter(st, WriterOptions{})
	w.Observe(store.Observation{URL: target, Method: "GET", ObservedAt: t0, Source: store.SourceProbe,
		Error: "dial tcp: lookup " + strings.Repeat("é", store.MaxObservationError)})
	w.Close()
	obs, _ := st.Observations(context.Background(), target)
	if len(obs) != 1 || len(obs[0].Error) > store.MaxObservationError || !utf8.ValidString(obs[0].Error) ||
		!strings.HasSuffix(obs[0].Error, "…") {
		t.Fatalf("%d observations; error of %d bytes", len(obs), len(obs[0].Error))
	}
}

type countingReader struct {
	st    store.Endpoints
	mu    sync.Mutex
	reads int
	fail  error
	gate  chan struct{} // when set, a read waits for it
}

func (c *countingReader) Observations(ctx context.Context, url string) ([]store.Observation, error) {
	c.mu.Lock()
	c.reads++
	fail, gate := c.fail, c.gate
	c.mu.Unlock()
	if gate != nil {
		<-gate
	}
	if fail != nil {
		return nil, fail
	}
	return c.st.Observations(ctx, url)
}

func (c *countingReader) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.reads
}

// The cache reads a URL once per TTL, a local write invalidates it at once, and errors are never cached.
func TestCacheTTLInvalidationAndErrors(t *testing.T) {
	st := memory.New()
	r := &countingReader{st: st}
	c := NewCache(r, time.Minute)
	now := t0
	c.now = func() time.Time { return now }
	w := NewWriter(st, WriterOptions{Writing: c.Writing})
	ctx := context.Background()
	for i := 0; i < 3; i++ {
		if obs, _ := c.Observations(ctx, target); len(obs) != 0 {
			t.Fatal("observations from nowhere")
		}
	}
	if r.count() != 1 {
		t.Fatalf("%d reads within the TTL, want 1", r.count())
	}
	w.Observe(seen(0, offer("base", payA, "10000")))
	w.Close() // written, and the cache invalidated
	if obs, _ := c.Observations(ctx, target); len(obs) != 1 || r.count() != 2 {
		t.Fatalf("after a local write: %d observations, %d reads", len(obs), r.count())
	}
	now = now.Add(2 * time.Minute)
	c.Observations(ctx, target)
	if r.count() != 3 {
		t.Fatalf("after the TTL: %d reads, want 3", r.count())
	}
	now = now.Add(2 * time.Minute)
	r.mu.Lock()
	r.fail = context.DeadlineExceeded
	r.mu.Unlock()
	if _, err := c.Observations(ctx, target); err == nil {
		t.Fatal("an error read was answered from the cache")
	}
	r.mu.Lock()
	r.fail = nil
	r.mu.Unlock()
	if obs, err := c.Observations(ctx, target); err != nil || len(obs) != 1 || r.count() != 5 {
		t.Fatalf("after an error: %v %d observations, %d reads", err, len(obs), r.count())
	}
}

// Past its TTL (and within StaleFor), an entry answers at once while one background read refreshes it: a
// store that does not answer does not hold the decision up. A failed refresh leaves the stale entry until
// StaleFor runs out; then the read is synchronous and its error is the caller's.
func TestCacheServesStaleWhileRefreshing(t *testing.T) {
	st := memory.New()
	r := &countingReader{st: st}
	c := NewCache(r, time.Second)
	var mu sync.Mutex
	now := t0
	c.now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	ctx := context.Background()
	st.PutObservation(ctx, seen(0, offer("base", payA, "10000")), store.Retention{})
	if obs, _ := c.Observations(ctx, target); len(obs) != 1 {
		t.Fatalf("%d observations", len(obs))
	}
	st.PutObservation(ctx, seen(time.Minute, offer("base", payB, "10000")), store.Retention{}) // another replica's write
	gate := make(chan struct{})
	r.mu.Lock()
	r.gate = gate
	r.mu.Unlock()
	advance(2 * time.Second)
	answered := make(chan error, 1)
	go func() {
		for i := 0; i < 3; i++ { // the stale entry, one refresh under way
			if obs, err := c.Observations(ctx, target); err != nil || len(obs) != 1 {
				answered <- fmt.Errorf("stale read: %d observations, %v", len(obs), err)
				return
			}
		}
		answered <- nil
	}()
	select {
	case err := <-answered:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second): // the store is gated shut: a read that waits for it never returns
		close(gate)
		t.Fatal("a stale entry's read waited for the store")
	}
	close(gate)
	waitFor(t, func() bool {
		obs, _ := c.Observations(ctx, target)
		return len(obs) == 2
	})
	if n := r.count(); n != 2 {
		t.Fatalf("%d store reads, want 2 (one refresh for three stale reads)", n)
	}
	r.mu.Lock()
	r.gate, r.fail = nil, context.DeadlineExceeded
	r.mu.Unlock()
	advance(2 * time.Second)
	if obs, err := c.Observations(ctx, target); err != nil || len(obs) != 2 {
		t.Fatalf("stale read during a failing store: %d, %v", len(obs), err)
	}
	waitFor(t, func() bool { return r.count() == 3 })
	advance(StaleFor)
	if _, err := c.Observations(ctx, target); err == nil {
		t.Fatal("past StaleFor, a failing store's error was hidden by the stale entry")
	}
}

// waitFor waits for cond with a deadline that only turns a hang into a failure (testutil.Eventually).
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	testutil.Eventually(t, 10*time.Second, cond, "condition")
}

// committedStore writes each observation, then tells the test and waits before returning: the window in which the
// store already has the write and the writer has not finished it.
type committedStore struct {
	*memory.Store
	committed, finish chan struct{}
}

func (s *committedStore) PutObservation(ctx context.Context, o store.Observation, keep store.Retention) error {
	err := s.Store.PutObservation(ctx, o, keep)
	s.committed <- struct{}{}
	<-s.finish
	return err
}

// Once the store holds an observation, no read through the cache answers without it, even before the writer has
// finished the write (the proxy's tests and its next decision read right after the store has it). Invalidating
// only after the write left that window open: the cache answered the older, empty history.
func TestCacheNeverAnswersOlderThanTheStore(t *testing.T) {
	st := &committedStore{Store: memory.New(), committed: make(chan struct{}), finish: make(chan struct{})}
	c := NewCache(st, time.Minute)
	ctx := context.Background()
	if obs, _ := c.Observations(ctx, target); len(obs) != 0 { // cached: empty
		t.Fatal("observations from nowhere")
	}
	w := NewWriter(st, WriterOptions{Writing: c.Writing})
	w.Observe(seen(0, offer("base", payA, "10000")))
	<-st.committed
	for i := 0; i < 2; i++ { // the second read would be answered from a newly taken entry
		if obs, err := c.Observations(ctx, target); err != nil || len(obs) != 1 {
			t.Fatalf("read %d while the write finishes: %d observations (%v), want the stored 1", i, len(obs), err)
		}
	}
	close(st.finish)
	w.Close()
	if obs, _ := c.Observations(ctx, target); len(obs) != 1 {
		t.Fatalf("after the write: %d observations", len(obs))
	}
}

// countingBatcher is a batching store that counts its write calls and tells when the first one is done.
type countingBatcher struct {
	*memory.Store
	mu    sync.Mutex
	calls int
	wrote int
	once  sync.Once
	first chan struct{}
}

func (c *countingBatcher) count(n int) {
	c.mu.Lock()
	c.calls++
	c.wrote += n
	c.mu.Unlock()
	c.once.Do(func() { close(c.first) })
}

func (c *countingBatcher) PutObservation(ctx context.Context, o store.Observation, keep store.Retention) error {
	defer c.count(1)
	return c.Store.PutObservation(ctx, o, keep)
}

func (c *countingBatcher) PutObservations(ctx context.Context, obs []store.Observation, keep store.Retention) error {
	defer c.count(len(obs))
	for _, o := range obs {
		if err := c.Store.PutObservation(ctx, o, keep); err != nil {
			return err
		}
	}
	return nil
}

// After a batch the writer lets observations gather (WriterOptions.Gather) instead of being woken by each
// Observe: the first observation is written at once, everything observed while the writer gathers is taken
// together (batches of at most maxBatch), and Close cuts the wait short, so nothing queued is lost. (Without
// the gathering every Observe wakes the writer, one goroutine handoff per decided 402: docs/benchmarks/proxy.md,
// "latency".)
func TestWriterGathersObservationsAfterABatch(t *testing.T) {
	st := &countingBatcher{Store: memory.New(), first: make(chan struct{})}
	w := NewWriter(st, WriterOptions{Gather: time.Hour})
	obs := func(i int) store.Observation {
		return store.Observation{URL: fmt.Sprintf("https://seller.example/api/%d", i), Method: "GET",
			ObservedAt: t0, Source: store.SourceChallenge, Status: 402}
	}
	w.Observe(obs(0))
	<-st.first // taken at once, not an hour later
	const more = 2*maxBatch + 44
	for i := 1; i <= more; i++ {
		w.Observe(obs(i))
	}
	// Give a writer that does not gather the time to take them: it would write now. (With the gathering none
	// is written before Close, however long this is: the test cannot fail for being slow.)
	var calls int
	for range 50 {
		time.Sleep(time.Millisecond)
		st.mu.Lock()
		calls = st.calls
		st.mu.Unlock()
		if calls != 1 {
			break
		}
	}
	if calls != 1 {
		t.Fatalf("%d store writes while the writer gathers; want only the first observation's", calls)
	}
	w.Close() // cuts the hour short
	if st.wrote != 1+more || st.calls != 1+3 {
		t.Fatalf("wrote %d observations in %d calls; want %d in 1 + 3 (batches of %d)", st.wrote, st.calls, 1+more, maxBatch)
	}
}

// The queue holds what gathers between two batches, not Queue observations' worth of memory: a writer with
// nothing queued holds no large array (a channel of DefaultQueue Observations was one 852 KB object the
// collector scanned whole at every cycle), and after a burst the arrays it used are dropped, not kept.
func TestWriterQueueHoldsOnlyWhatIsQueued(t *testing.T) {
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	w := NewWriter(memory.New(), WriterOptions{Gather: -1})
	runtime.ReadMemStats(&m1)
	if got := m1.TotalAlloc - m0.TotalAlloc; got > 256<<10 {
		t.Fatalf("NewWriter allocated %d bytes; want no queue sized by DefaultQueue", got)
	}
	for i := range 3000 { // a burst, taken in whatever pieces
		w.Observe(store.Observation{URL: fmt.Sprintf("https://seller.example/api/%d", i), Method: "GET",
			ObservedAt: t0, Source: store.SourceChallenge, Status: 402})
	}
	w.Close()
	if cap(w.pending) > 4*maxBatch || cap(w.spare) > 4*maxBatch {
		t.Fatalf("after the burst the queue keeps arrays of %d and %d observations; want at most %d", cap(w.pending), cap(w.spare), 4*maxBatch)
	}
	if got := value(t, w.written.WithLabelValues(store.SourceChallenge)); got != 3000 {
		t.Fatalf("written %v of 3000", got)
	}
}
