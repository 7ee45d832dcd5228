package redis

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/payguard/payguard/internal/testredis"
)

// One pipeline of different scripts, some that fail in every way a script can (an error reply, a Lua
// runtime error, a command refused inside the script, a nil reply) between others that succeed, and one
// Redis has not cached (NOSCRIPT, run again with EVAL): every caller gets its own script's reply or its own
// error, never a neighbour's; an error never comes back as a value and a value never as an error; and a
// script is run again only when Redis said it did not run it (NOSCRIPT): each script that writes runs once.
func TestBatchMixedScriptsEachGetsItsOwnReplyOrError(t *testing.T) {
	own := testredis.StartOwn(t)
	rdb := goredis.NewClient(&goredis.Options{Addr: own.Addr()})
	t.Cleanup(func() { rdb.Close() })
	ctx := context.Background()
	if err := rdb.RPush(ctx, "alist", "x").Err(); err != nil {
		t.Fatal(err)
	}
	kinds := []struct {
		sc     *goredis.Script
		cached bool
		check  func(i int, v any, err error) error
	}{
		{goredis.NewScript(`return "echo " .. ARGV[1] .. " " .. KEYS[1]`), true, func(i int, v any, err error) error {
			if want := fmt.Sprintf("echo v%d k%d", i, i); err != nil || v != want {
				return fmt.Errorf("%v, %v; want %q", v, err, want)
			}
			return nil
		}},
		{goredis.NewScript(`redis.call("INCR", KEYS[1]) return redis.error_reply("refused " .. ARGV[1])`), true, func(i int, v any, err error) error {
			if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("refused v%d", i)) || v != nil {
				return fmt.Errorf("%v, %v; want its own error reply", v, err)
			}
			return nil
		}},
		{goredis.NewScript(`error("lua " .. ARGV[1])`), true, func(i int, v any, err error) error {
			if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("lua v%d", i)) || v != nil {
				return fmt.Errorf("%v, %v; want its own Lua error", v, err)
			}
			return nil
		}},
		{goredis.NewScript(`return redis.call("INCR", "alist")`), true, func(i int, v any, err error) error {
			if err == nil || !strings.Contains(err.Error(), "WRONGTYPE") || v != nil {
				return fmt.Errorf("%v, %v; want WRONGTYPE", v, err)
			}
			return nil
		}},
		{goredis.NewScript(`return nil`), true, func(i int, v any, err error) error {
			if !errors.Is(err, goredis.Nil) || v != nil {
				return fmt.Errorf("%v, %v; want a nil reply", v, err)
			}
			return nil
		}},
		{goredis.NewScript(`redis.call("INCR", KEYS[1]) return {ARGV[1], tonumber(ARGV[2])}`), false, func(i int, v any, err error) error {
			a, ok := v.([]any)
			if err != nil || !ok || len(a) != 2 || a[0] != fmt.Sprintf("v%d", i) || a[1] != int64(i) {
				return fmt.Errorf("%#v, %v; want [v%d %d]", v, err, i, i)
			}
			return nil
		}},
	}
	for _, k := range kinds {
		if k.cached {
			if err := k.sc.Load(ctx, rdb).Err(); err != nil {
				t.Fatal(err)
			}
		}
	}
	b := &batcher{rdb: rdb}
	b.mu.Lock()
	b.flights = maxFlights // a flight is in the air: every caller below queues
	b.mu.Unlock()
	const n = 5 * 6
	type result struct {
		v   any
		err error
	}
	res := make([]result, n)
	var wg sync.WaitGroup
	var ended atomic.Int64
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer ended.Add(1)
			cmd := b.run(ctx, kinds[i%len(kinds)].sc, []string{fmt.Sprintf("k%d", i)}, []any{fmt.Sprintf("v%d", i), i})
			res[i] = result{cmd.Val(), cmd.Err()}
		}()
		for {
			b.mu.Lock()
			queued := len(b.queue)
			b.mu.Unlock()
			if queued > i || ended.Load() > 0 {
				break
			}
			time.Sleep(100 * time.Microsecond)
		}
	}
	if ended.Load() > 0 {
		t.Fatal("a caller ended before the batch was let go: it did not queue")
	}
	b.handOff()
	wg.Wait()
	for i, r := range res {
		if err := kinds[i%len(kinds)].check(i, r.v, r.err); err != nil {
			t.Errorf("caller %d (script %d): %v", i, i%len(kinds), err)
		}
		// The scripts that write (one that then fails, one run again after NOSCRIPT) ran once each.
		if k := i % len(kinds); k == 1 || k == 5 {
			if got, err := rdb.Get(ctx, fmt.Sprintf("k%d", i)).Int(); err != nil || got != 1 {
				t.Errorf("caller %d (script %d) ran %d times (%v), want once", i, k, got, err)
			}
		}
	}
}
