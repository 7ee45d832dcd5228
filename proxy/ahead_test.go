package proxy

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/payguard/payguard/internal/testredis"
	"github.com/payguard/payguard/policy"
	"github.com/payguard/payguard/store/redis"
)

// countHook counts the commands a go-redis client sends (each script call is one).
type countHook struct{ n atomic.Int64 }

func (h *countHook) DialHook(next goredis.DialHook) goredis.DialHook { return next }
func (h *countHook) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook {
	return func(ctx context.Context, cmd goredis.Cmder) error { h.n.Add(1); return next(ctx, cmd) }
}
func (h *countHook) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []goredis.Cmder) error {
		h.n.Add(int64(len(cmds)))
		return next(ctx, cmds)
	}
}

// On the redis store a plain allow is one round trip (issue 36: decided on an assumed spend of 0, the
// reservation, its ticket, the day's figures and the seller's alarm in one script; ahead.go), and the input
// its receipt is signed over (a journal's) names the ledger's real spend, read in that same step, not the
// assumed one. A refusal at the cap is still the engine's own daily-cap block on the real figures.
func TestPlainAllowInOneRoundTripOnRedis(t *testing.T) {
	ctx := context.Background()
	st := prefixedRedis(t, "pgtest-ahead")
	rules := testRules()
	p, _, _ := newTestProxy(t, st, rules, maxUnpaid(1<<20))
	defer p.Close()
	j, path := openTestJournal(t, 1<<20, 2)
	p.opts.Journal = j
	// Spend already made today (by another replica, say): the receipt must name it.
	spent := int64(rules.DailyCapUSD) / 4
	if _, err := st.Reserve(ctx, p.opts.Budget, p.day(), spent, int64(rules.DailyCapUSD)); err != nil {
		t.Fatal(err)
	}
	guard402Body(p, "https://shop.example/warm") // the scripts loaded, the site's bound made
	h := &countHook{}
	st.Client().AddHook(h)
	out, body := guard402Body(p, "https://shop.example/x")
	if got := out.Header.Get(HeaderDecision); got != allow {
		t.Fatalf("decision %q: %s", got, body)
	}
	if n := h.n.Load(); n != 1 {
		t.Fatalf("%d commands to Redis for a plain allow, want 1", n)
	}
	j.Close()
	entries := readJournal(t, path)
	last := entries[len(entries)-1]
	var in struct {
		Context struct {
			Spent json.RawMessage `json:"spent_today_usd"`
		} `json:"context"`
	}
	if err := json.Unmarshal(last.Input, &in); err != nil {
		t.Fatal(err)
	}
	st0, _ := st.State(ctx, p.opts.Budget, p.day())
	before := st0.Spent + st0.Reserved - out1Amount(t, st0.Reserved, spent)
	want, _ := json.Marshal(policy.USD(before))
	if string(in.Context.Spent) != string(want) || before < spent {
		t.Fatalf("the receipt's input names spent_today_usd %s, want the ledger's %s (at least %d)", in.Context.Spent, want, spent)
	}
	// At the cap: the engine's own daily-cap block, on the real figures.
	if _, err := st.Reserve(ctx, p.opts.Budget, p.day(), int64(rules.DailyCapUSD)-st0.Spent-st0.Reserved, int64(rules.DailyCapUSD)); err != nil {
		t.Fatal(err)
	}
	out, body = guard402Body(p, "https://shop.example/y")
	if got := out.Header.Get(HeaderDecision); got != block || !strings.Contains(string(body), "daily cap") {
		t.Fatalf("at the cap: decision %q: %s", got, body)
	}
}

// out1Amount is the amount each of the two allowed 402s reserved: (reserved now - spent before) / 2.
func out1Amount(t *testing.T, reservedNow, before int64) int64 {
	t.Helper()
	if (reservedNow-before)%2 != 0 || reservedNow <= before {
		t.Fatalf("reserved %d after two allows from %d", reservedNow, before)
	}
	return (reservedNow - before) / 2
}

// A refusal that the ahead path meets after the engine allowed on the assumed spend (here the site's unpaid
// bound) is decided again on the ledger's read: its signed receipt names the ledger's spend, never the
// assumed 0.
func TestAheadRefusalNamesTheLedgerSpend(t *testing.T) {
	st := prefixedRedis(t, "pgtest-ahead-bound")
	p, _, _ := newTestProxy(t, st, testRules(), maxUnpaid(1))
	defer p.Close()
	j, path := openTestJournal(t, 1<<20, 2)
	p.opts.Journal = j
	if out, body := guard402Body(p, "https://shop.example/a"); out.Header.Get(HeaderDecision) != allow {
		t.Fatalf("first: %s", body)
	}
	out, body := guard402Body(p, "https://shop.example/b")
	if out.Header.Get(HeaderDecision) != block || !strings.Contains(string(body), "unpaid") {
		t.Fatalf("second at the bound: %q %s", out.Header.Get(HeaderDecision), body)
	}
	j.Close()
	entries := readJournal(t, path)
	last := entries[len(entries)-1]
	var in struct {
		Context struct {
			Spent *float64 `json:"spent_today_usd"`
		} `json:"context"`
	}
	if err := json.Unmarshal(last.Input, &in); err != nil || in.Context.Spent == nil || *in.Context.Spent <= 0 {
		t.Fatalf("the refusal's input names %s (%v), want the first allow's reservation", last.Input, err)
	}
}

// prefixedRedis is a store on the test Redis under a prefix of its own (name and the time), closed and its
// keys dropped when the test ends.
func prefixedRedis(t *testing.T, name string) *redis.Store {
	t.Helper()
	prefix := fmt.Sprintf("%s-%d:", name, time.Now().UnixNano())
	st, err := redis.Open(context.Background(), redis.Options{URL: testredis.URL(t), Prefix: prefix, AllowVolatile: true, InitIfEmpty: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dropPrefix(t, st, prefix); st.Close() })
	return st
}
