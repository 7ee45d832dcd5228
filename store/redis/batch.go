package redis

import (
	"context"
	"errors"
	"sync"

	goredis "github.com/redis/go-redis/v9"
)

// Scripts that run at the same time share one round trip (issue 36, redis402c). A decided 402 on a fleet is
// one script (ReserveTicketAhead); at c=8 each used to be one EVALSHA on a connection of its own: a
// write(2) and a read(2) in the proxy and the goroutine's netpoll wakeup, and in redis-server a read, a reply
// write and an event per script. Here the first caller runs its script at once, as before (a lone decision,
// c=1, pays nothing more than an uncontended mutex); a caller that arrives while a script is in flight
// queues, and when a flight lands the oldest queued caller runs every queued script as one pipeline
// (one write, one read), hands each caller its own reply and passes the turn on; at most maxFlights
// round trips are in flight at once. Each script is still one
// atomic EVALSHA in Redis (a batch's in the order queued): the cap checks, the epoch guard and a caller seeing its
// own script's reply before anything is released are unchanged, and a pipeline that fails fails every script
// in it (no reply, no reservation reported).
type batcher struct {
	rdb *goredis.Client

	mu      sync.Mutex
	flights int           // scripts or batches in flight (at most maxFlights); a runner hands its turn on when it lands
	queue   []*scriptCall // callers waiting for a turn, oldest first
}

// maxFlights round trips may be in flight at once. One batches the most (0.22 Redis reads per decision at c=8
// in BenchmarkDecide402, against 0.35 with two) but makes every decision wait on the one goroutine that runs
// the batch being scheduled again when its reply lands: on the quietest runs of issue 36 (load 2–4) one flight
// decided 0.85× main's rate at c=8 over HTTP, two 0.92× (HTTP) and 1.26× (HTTPS), at the same CPU per decision
// (docs/benchmarks/store.md, redis402c).
const maxFlights = 2

// maxBatch bounds one pipeline; callers past it wait for the next round trip.
const maxBatch = 64

// scriptCall is one queued caller's script and, once done is signalled, either its reply (cmd) or the turn to
// run the queue (lead).
type scriptCall struct {
	sc   *goredis.Script
	keys []string
	args []any
	cmd  *goredis.Cmd
	lead bool
	done chan struct{} // one signal: lead set, or cmd set
}

// run runs sc as Script.Run would (EVALSHA, EVAL when Redis has not cached it), sharing a round trip with the
// scripts other callers run at the same time.
func (b *batcher) run(ctx context.Context, sc *goredis.Script, keys []string, args []any) *goredis.Cmd {
	b.mu.Lock()
	if b.flights < maxFlights {
		b.flights++
		b.mu.Unlock()
		defer b.handOff() // deferred: a panic below must not leave the turn taken and every later script waiting
		return sc.Run(ctx, b.rdb, keys, args...)
	}
	c := &scriptCall{sc: sc, keys: keys, args: args, done: make(chan struct{}, 1)}
	b.queue = append(b.queue, c)
	b.mu.Unlock()
	// No select on ctx: the wait is at most the flight ahead plus this call's own, each bounded by the
	// client's read and write timeouts, as a lone call's is (go-redis does not cut a call short on ctx).
	<-c.done
	if c.lead {
		b.runQueue(ctx, c)
	}
	return c.cmd
}

// handOff ends a turn: the oldest queued caller, if any, runs the queue next; else one flight fewer.
func (b *batcher) handOff() {
	b.mu.Lock()
	if len(b.queue) == 0 {
		b.flights--
		b.mu.Unlock()
		return
	}
	next := b.queue[0]
	b.queue[0] = nil // taken: the next turn's runner is not in the queue
	b.queue = b.queue[1:]
	b.mu.Unlock()
	next.lead = true
	next.done <- struct{}{}
}

// runQueue is the turn of self, the caller that was at the head of the queue: it takes up to maxBatch-1 more
// queued calls, runs them and its own in one pipeline, gives each its reply and hands the turn on.
func (b *batcher) runQueue(ctx context.Context, self *scriptCall) {
	b.mu.Lock()
	n := min(len(b.queue), maxBatch-1)
	batch := make([]*scriptCall, 1+n)
	batch[0] = self
	copy(batch[1:], b.queue)
	rest := copy(b.queue, b.queue[n:])
	clear(b.queue[rest:])
	b.queue = b.queue[:rest]
	b.mu.Unlock()
	replied := false
	defer func() {
		for _, c := range batch[1:] {
			if !replied { // the round trip panicked (the panic goes on up this caller's stack): fail, not hang
				c.cmd = goredis.NewCmd(ctx)
				c.cmd.SetErr(errBatchFailed)
			}
			c.done <- struct{}{}
		}
		b.handOff()
	}()

	// The batch is everyone's: the leader's cancellation must not fail the others' scripts.
	ctx = context.WithoutCancel(ctx)
	if len(batch) == 1 {
		batch[0].cmd = batch[0].sc.Run(ctx, b.rdb, batch[0].keys, batch[0].args...)
	} else {
		b.pipeline(ctx, batch, false)
		var again []*scriptCall
		for _, c := range batch {
			if noScript(c.cmd.Err()) { // not run at all: EVAL it, as Script.Run does (after a restart or a flush)
				again = append(again, c)
			}
		}
		if len(again) > 0 {
			b.pipeline(ctx, again, true)
		}
	}
	replied = true
}

var errBatchFailed = errors.New("store/redis: the round trip this script shared failed before its reply")

// pipeline runs batch's scripts in one round trip, EVALSHA or (eval) EVAL, and sets each call's cmd.
func (b *batcher) pipeline(ctx context.Context, batch []*scriptCall, eval bool) {
	pipe := b.rdb.Pipeline()
	for _, c := range batch {
		if eval {
			c.cmd = c.sc.Eval(ctx, pipe, c.keys, c.args...)
		} else {
			c.cmd = c.sc.EvalSha(ctx, pipe, c.keys, c.args...)
		}
	}
	_, _ = pipe.Exec(ctx) // each cmd holds its own reply or error (a pipeline that failed: every cmd's)
}

// noScript is Redis's reply to EVALSHA of a script it has not cached (after a restart or SCRIPT FLUSH): the
// script did not run.
func noScript(err error) bool {
	return err != nil && (errors.Is(err, goredis.ErrNoScript) || goredis.HasErrorPrefix(err, "NOSCRIPT"))
}
