package notify

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/payguard/payguard/internal/testredis"
	"github.com/payguard/payguard/internal/testutil"
	"github.com/payguard/payguard/preflight"
	"github.com/payguard/payguard/screening"
	"github.com/payguard/payguard/store"
	"github.com/payguard/payguard/store/memory"
	"github.com/payguard/payguard/store/redis"
	"github.com/payguard/payguard/x402"
)

type sink struct {
	mu     sync.Mutex
	events []Event
}

func (s *sink) Send(ev Event) {
	s.mu.Lock()
	s.events = append(s.events, ev)
	s.mu.Unlock()
}

func (s *sink) types() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, e := range s.events {
		out = append(out, e.Type+" "+e.Hold.ID)
	}
	return out
}

// heldDecision is what the proxy stores: the engine's result JSON, with screening evidence.
func heldDecision(t *testing.T) []byte {
	age := 3
	res := preflight.Result{Decision: "hold", Reasons: []string{"hold: merchant domain is 3 days old"},
		Payee: &preflight.Payee{PayTo: "0x2222222222222222222222222222222222222222", Network: "eip155:8453", MerchantDomain: "new.example",
			Sanctions: preflight.PayeeSanctions{Screened: true, Status: "possible",
				Matches: []screening.SanctionsMatch{{Name: "ACME TRADING", MatchedName: "ACME", Score: 0.91}}},
			Domain: preflight.PayeeDomainInfo{Checked: true, AgeDays: &age}},
		Receipt: preflight.Receipt{ID: "rcpt_1"},
		ChosenOption: &x402.Requirement{Version: x402.V2, Scheme: "exact", Network: "eip155:8453", Amount: "500000",
			Asset: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913", PayTo: "0x2222222222222222222222222222222222222222", MaxTimeoutSeconds: 60}}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func newHold(t *testing.T, st store.Holds, id string, now time.Time, ttl time.Duration) {
	t.Helper()
	if err := st.CreateHold(context.Background(), store.Hold{ID: id, Key: "k-" + id, Method: "GET",
		URL: "https://new.example/report", Decision: heldDecision(t), AmountMicros: 500000,
		CreatedAt: now, ExpiresAt: now.Add(ttl)}); err != nil {
		t.Fatal(err)
	}
}

// One event per change: created, then approved or denied; a pending hold past its expiry expired. The
// created event carries the screening evidence, the budget and the approve link.
func TestWatcherEvents(t *testing.T) {
	ck := testutil.NewClock(time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC))
	st := memory.NewWithClock(ck.Now)
	out := &sink{}
	w := NewWatcher(WatcherOptions{Source: st, Sink: out, Budget: "default", CapMicros: 10_000_000,
		ConsoleURL: "https://approve.example/", Now: ck.Now, Logger: quiet})
	ctx := context.Background()
	newHold(t, st, "hold_a", ck.Now(), time.Minute)
	newHold(t, st, "hold_b", ck.Now(), time.Minute)
	newHold(t, st, "hold_c", ck.Now(), time.Minute)
	w.Scan(ctx)
	w.Scan(ctx) // nothing new
	if _, err := st.ResolveHold(ctx, "hold_a", store.HoldApproved, "alice", "fine", ck.Now()); err != nil {
		t.Fatal(err)
	}
	if _, err := st.ResolveHold(ctx, "hold_b", store.HoldDenied, "bob", "", ck.Now()); err != nil {
		t.Fatal(err)
	}
	w.Scan(ctx)
	ck.Advance(2 * time.Minute)
	w.Scan(ctx)
	w.Scan(ctx)
	got := fmt.Sprint(out.types())
	want := "[hold.created hold_a hold.created hold_b hold.created hold_c hold.approved hold_a hold.denied hold_b hold.expired hold_c]"
	if got != want {
		t.Fatalf("events %s\nwant   %s", got, want)
	}
	ev := out.events[0]
	h := ev.Hold
	if ev.ApproveURL != "https://approve.example/#hold=hold_a" || ev.Budget == nil || ev.Budget.CapUSD != "10" ||
		h.Host != "new.example" || h.AmountUSD != "0.5" || h.AmountAtomic != "500000" || h.Asset == "" || h.Network != "eip155:8453" || h.PayTo == "" || len(h.Reasons) != 1 || h.Screening == nil ||
		len(h.Screening.Sanctions.Matches) != 1 || h.Screening.Sanctions.Matches[0].Score != 0.91 ||
		*h.Screening.Domain.AgeDays != 3 || h.ExpiresAt.IsZero() {
		b, _ := json.Marshal(ev)
		t.Fatalf("created event lacks what a person needs: %s", b)
	}
	if a := out.events[3]; a.Hold.ResolvedBy != "alice" || a.Hold.Note != "fine" || a.Hold.Status != "approved" {
		t.Errorf("approved event %+v", a.Hold)
	}
}

// A fleet: two proxies' watchers over one Redis store (each its own connection) send every event once
// between them, whichever saw it first.
func TestWatcherFleetSendsOnce(t *testing.T) {
	url := testredis.URL(t)
	prefix := fmt.Sprintf("payguard-notify-test-%d-%d:", os.Getpid(), time.Now().UnixNano())
	ctx := context.Background()
	var stores []*redis.Store
	for range 2 {
		st, err := redis.Open(ctx, redis.Options{URL: url, Prefix: prefix, AllowVolatile: true, InitIfEmpty: true})
		if err != nil {
			t.Fatalf("redis: %v", err)
		}
		if len(stores) == 0 {
			t.Cleanup(func() { dropPrefix(t, st, prefix); st.Close() })
		} else {
			t.Cleanup(func() { st.Close() })
		}
		stores = append(stores, st)
	}
	out := &sink{}
	var ws []*Watcher
	for _, st := range stores {
		ws = append(ws, NewWatcher(WatcherOptions{Source: st, Sink: out, Budget: "default", CapMicros: 1, Logger: quiet}))
	}
	now := time.Now()
	for i := range 5 {
		newHold(t, stores[i%2], fmt.Sprintf("hold_f%d", i), now, time.Hour)
	}
	var wg sync.WaitGroup
	for _, w := range ws {
		wg.Add(1)
		go func() { defer wg.Done(); w.Scan(ctx); w.Scan(ctx) }()
	}
	wg.Wait()
	if _, err := stores[1].ResolveHold(ctx, "hold_f0", store.HoldApproved, "carol", "", time.Now()); err != nil {
		t.Fatal(err)
	}
	for _, w := range ws {
		wg.Add(1)
		go func() { defer wg.Done(); w.Scan(ctx) }()
	}
	wg.Wait()
	counts := map[string]int{}
	for _, s := range out.types() {
		counts[s]++
	}
	if len(counts) != 6 || counts["hold.approved hold_f0"] != 1 {
		t.Fatalf("events %v; want 5 created and 1 approved, each once", counts)
	}
	for k, n := range counts {
		if n != 1 {
			t.Errorf("%s sent %d times", k, n)
		}
	}
}

// dropPrefix deletes the keys a test wrote under prefix in the shared Redis.
func dropPrefix(t *testing.T, st *redis.Store, prefix string) {
	ctx := context.Background()
	iter := st.Client().Scan(ctx, 0, prefix+"*", 1000).Iterator()
	var keys []string
	for iter.Next(ctx) {
		keys = append(keys, iter.Val())
	}
	if len(keys) > 0 {
		if err := st.Client().Del(ctx, keys...).Err(); err != nil {
			t.Errorf("cleaning up %s: %v", prefix, err)
		}
	}
}
