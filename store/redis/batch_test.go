package redis

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/payguard/payguard/internal/testredis"
	"github.com/payguard/payguard/store"
)

// The tests below make the batch deterministic: every turn is taken as calls in flight take them, the callers
// queue behind them, and one handOff lets them go as one pipeline.

const batchCallers = 8

// batchStore is a store on a redis-server of its own, and a plain client on it. The store has run the
// script once (Redis has cached it) and a pipeline (go-redis runs pipelines on connections of their own).
func batchStore(t *testing.T) (*Store, *goredis.Client, *testredis.Own) {
	t.Helper()
	own := testredis.StartOwn(t, "--appendonly", "yes")
	s, err := Open(context.Background(), Options{URL: own.URL(), AllowVolatile: true, InitIfEmpty: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	admin := goredis.NewClient(&goredis.Options{Addr: own.Addr()})
	t.Cleanup(func() { admin.Close() })
	ctx := context.Background()
	now := time.Now()
	tk := store.Ticket{ID: "tkt_warm", Key: strings.Repeat("cd", 32), ReceiptID: "rcpt_warm", ExpiresAt: now.Add(time.Minute), Option: []byte(`{}`)}
	if _, err := s.ReserveTicketAhead(ctx, "warm", now.UTC().Format("2006-01-02"), "seller.example", 1, 1<<40, tk, now); err != nil {
		t.Fatal(err)
	}
	if _, err := s.rdb.Pipelined(ctx, func(p goredis.Pipeliner) error { p.Ping(ctx); return nil }); err != nil {
		t.Fatal(err)
	}
	return s, admin, own
}

type aheadResult struct {
	got store.Ahead
	err error
}

// queueAhead holds the turn, starts n ReserveTicketAhead calls (ticket tkt_<i>, amount i+1, cap capMicros)
// one after the other so that they queue in order, and returns a function that lets them go and collects
// their results. With the batcher bypassed (every call straight to Redis) nothing queues and the calls end on
// their own: release then returns what they got.
func queueAhead(t *testing.T, s *Store, ctxs []context.Context, capMicros int64) (release func() []aheadResult) {
	t.Helper()
	b := s.scripts
	b.mu.Lock()
	b.flights = maxFlights
	b.mu.Unlock()
	now := time.Now()
	day := now.UTC().Format("2006-01-02")
	res := make([]aheadResult, len(ctxs))
	var wg sync.WaitGroup
	var ended atomic.Int64
	for i, ctx := range ctxs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer ended.Add(1)
			tk := store.Ticket{ID: fmt.Sprintf("tkt_%d", i), Key: strings.Repeat("ab", 32), ReceiptID: fmt.Sprintf("rcpt_%d", i),
				ExpiresAt: now.Add(5 * time.Minute), Option: []byte(`{"scheme":"exact","network":"eip155:84532","amount":"1"}`)}
			got, err := s.ReserveTicketAhead(ctx, "b", day, "seller.example", int64(i+1), capMicros, tk, now)
			res[i] = aheadResult{got, err}
		}()
		for { // the next caller starts once this one is queued (or has ended, bypassing the queue)
			b.mu.Lock()
			queued := len(b.queue)
			b.mu.Unlock()
			if queued > i || ended.Load() > int64(i) {
				break
			}
			time.Sleep(100 * time.Microsecond)
		}
	}
	return func() []aheadResult {
		b.handOff()
		wg.Wait()
		return res
	}
}

func backgrounds(n int) []context.Context {
	ctxs := make([]context.Context, n)
	for i := range ctxs {
		ctxs[i] = context.Background()
	}
	return ctxs
}

func readsProcessed(t *testing.T, admin *goredis.Client) int64 {
	t.Helper()
	info, err := admin.Info(context.Background(), "stats").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, "total_reads_processed:"); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	t.Fatal("no total_reads_processed in INFO stats")
	return 0
}

// Callers that wait at the same time share one round trip, each gets its own script's reply, and the scripts
// ran in the order queued: each one's "figures before" are the amounts of those ahead of it.
func TestConcurrentScriptsShareARoundTrip(t *testing.T) {
	s, admin, _ := batchStore(t)
	reads0 := readsProcessed(t, admin)
	res := queueAhead(t, s, backgrounds(batchCallers), 1<<40)()
	// The one INFO below is read too; the batch's scripts, one pipeline, are one read (two if Redis took
	// the pipeline in two reads). Without the batch: one read per caller.
	if reads := readsProcessed(t, admin) - reads0; reads > 3 {
		t.Errorf("%d reads of client sockets for %d scripts queued together: not one round trip", reads, batchCallers)
	}
	var before int64
	for i, r := range res {
		if r.err != nil || !r.got.Reserved {
			t.Fatalf("caller %d: %+v %v", i, r.got, r.err)
		}
		if r.got.Ticket.ID != fmt.Sprintf("tkt_%d", i) || r.got.Ticket.AmountMicros != int64(i+1) {
			t.Fatalf("caller %d got ticket %s of %d: another caller's reply", i, r.got.Ticket.ID, r.got.Ticket.AmountMicros)
		}
		if r.got.State.Reserved != before {
			t.Fatalf("caller %d: figures before %+v, want reserved %d (the callers ahead of it)", i, r.got.State, before)
		}
		before += int64(i + 1)
	}
	if st, err := s.State(context.Background(), "b", time.Now().UTC().Format("2006-01-02")); err != nil || st.Reserved != before {
		t.Fatalf("State = %+v, %v; want reserved %d", st, err, before)
	}
}

// One batch holds the cap: 8 callers of amounts 1..8 against a cap of 15 are reserved while the running sum
// fits (1+2+3+4+5 = 15), refused after, and the ledger ends at the cap.
func TestBatchHoldsTheCap(t *testing.T) {
	s, _, _ := batchStore(t)
	res := queueAhead(t, s, backgrounds(batchCallers), 15)()
	var reserved int64
	for i, r := range res {
		switch {
		case r.err == nil && r.got.Reserved:
			if reserved+int64(i+1) > 15 {
				t.Errorf("caller %d reserved %d over %d already reserved: over the cap", i, i+1, reserved)
			}
			reserved += int64(i + 1)
		case errors.Is(r.err, store.ErrBudgetExceeded):
			if reserved+int64(i+1) <= 15 {
				t.Errorf("caller %d refused with room (%d reserved)", i, reserved)
			}
		default:
			t.Errorf("caller %d: %+v %v", i, r.got, r.err)
		}
	}
	if st, _ := s.State(context.Background(), "b", time.Now().UTC().Format("2006-01-02")); reserved != 15 || st.Reserved != 15 {
		t.Fatalf("reserved %d, State %+v: want 15", reserved, st)
	}
}

// Redis lost while scripts are queued: every caller gets an error, none a reservation (fail closed).
func TestBatchFailsClosedWhenRedisIsLost(t *testing.T) {
	s, _, own := batchStore(t)
	release := queueAhead(t, s, backgrounds(batchCallers), 1<<40)
	own.Stop()
	for i, r := range release() {
		if r.err == nil || r.got.Reserved {
			t.Errorf("caller %d with Redis gone: %+v %v", i, r.got, r.err)
		}
	}
}

// Redis forgot the scripts (a restart, SCRIPT FLUSH) while callers were queued: every script in the pipeline
// is refused NOSCRIPT, which means it did not run; each is run again with EVAL (one more pipeline), once:
// every caller is reserved and the ledger holds each amount once.
func TestBatchRunsEachScriptOnceAfterNoScript(t *testing.T) {
	s, admin, _ := batchStore(t)
	release := queueAhead(t, s, backgrounds(batchCallers), 1<<40)
	if err := admin.ScriptFlush(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	var sum int64
	for i, r := range release() {
		if r.err != nil || !r.got.Reserved {
			t.Fatalf("caller %d after SCRIPT FLUSH: %+v %v", i, r.got, r.err)
		}
		sum += int64(i + 1)
	}
	if st, _ := s.State(context.Background(), "b", time.Now().UTC().Format("2006-01-02")); st.Reserved != sum {
		t.Fatalf("State %+v, want reserved %d: a script ran twice or not at all", st, sum)
	}
}

// The caller that runs the batch has gone (its request cancelled): the others' scripts still run and each
// gets its reply.
func TestBatchOutlivesItsRunnersCancellation(t *testing.T) {
	s, _, _ := batchStore(t)
	ctxs := backgrounds(batchCallers)
	gone, cancel := context.WithCancel(context.Background())
	ctxs[0] = gone
	release := queueAhead(t, s, ctxs, 1<<40)
	cancel()
	for i, r := range release()[1:] {
		if r.err != nil || !r.got.Reserved {
			t.Errorf("caller %d, behind a cancelled one: %+v %v", i+1, r.got, r.err)
		}
	}
}

// panicPipeline panics in every pipeline the client runs, as a bug in the client would.
type panicPipeline struct{}

func (panicPipeline) DialHook(next goredis.DialHook) goredis.DialHook          { return next }
func (panicPipeline) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook { return next }
func (panicPipeline) ProcessPipelineHook(goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return func(context.Context, []goredis.Cmder) error { panic("pipeline bug") }
}

// A panic while the batch is in flight goes up the stack of the caller that ran it; every other caller in
// the batch gets an error (not a reply it could take for success, and not a wait without end), and the
// turn is free again: the next script runs.
func TestBatchThatPanicsFailsTheOthersAndFreesTheTurn(t *testing.T) {
	s, _, _ := batchStore(t)
	s.rdb.AddHook(panicPipeline{})
	b := s.scripts
	b.mu.Lock()
	b.flights = maxFlights
	b.mu.Unlock()
	errs := make([]error, batchCallers)
	var wg sync.WaitGroup
	for i := range batchCallers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() {
				if r := recover(); r != nil {
					errs[i] = fmt.Errorf("panicked: %v", r)
				}
			}()
			errs[i] = s.MarkSeller(context.Background(), fmt.Sprintf("seller%d.example", i))
		}()
		for {
			b.mu.Lock()
			queued := len(b.queue)
			b.mu.Unlock()
			if queued > i {
				break
			}
			time.Sleep(100 * time.Microsecond)
		}
	}
	b.handOff()
	wg.Wait()
	for i, err := range errs {
		if err == nil {
			t.Errorf("caller %d: no error from a batch that never ran", i)
		}
	}
	if err := s.MarkSeller(context.Background(), "after.example"); err != nil { // a lone script: no pipeline
		t.Fatalf("after the panic: %v", err)
	}
}
