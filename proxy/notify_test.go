package proxy

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/payguard/payguard/internal/testutil"
	"github.com/payguard/payguard/proxy/notify"
	"github.com/payguard/payguard/store/memory"
	"github.com/payguard/payguard/x402"
)

// withNotifier runs a watcher over the harness's store and a sender to url, kicked by the proxy.
func withNotifier(t *testing.T, st notify.Source, url string, secret []byte, queue int) (harnessOption, *notify.Sender) {
	quiet := slog.New(slog.NewJSONHandler(io.Discard, nil))
	s := notify.NewSender(notify.Options{Targets: []notify.Target{{URL: url, Secret: secret}}, QueueSize: queue,
		Timeout: time.Hour, Backoff: time.Millisecond, Logger: quiet})
	w := notify.NewWatcher(notify.WatcherOptions{Source: st, Sink: s, Budget: "default", CapMicros: 25_000_000,
		ConsoleURL: "http://console.example/", Poll: time.Hour, Logger: quiet})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); s.Run(ctx) }()
	go func() { defer wg.Done(); w.Run(ctx) }()
	t.Cleanup(func() { cancel(); wg.Wait() })
	return func(su *setup) { su.OnHoldChange = w.Kick }, s
}

// A real 402 held by the proxy reaches the webhook at once (Poll is an hour: the proxy's kick sends it),
// signed, with what a person needs; the approval follows as its own event.
func TestWebhookHoldCreatedAndApproved(t *testing.T) {
	secret := []byte("whsec-0123456789")
	got := make(chan notify.Event, 10)
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if err := notify.Verify(secret, r.Header.Get(notify.HeaderSignature), b, time.Now(), time.Minute); err != nil {
			t.Errorf("signature: %v", err)
		}
		var ev notify.Event
		if err := json.Unmarshal(b, &ev); err != nil {
			t.Errorf("body: %v", err)
		}
		got <- ev
	}))
	defer recv.Close()
	st := memory.New()
	opt, _ := withNotifier(t, st, recv.URL, secret, 16)
	s := newSeller(t, x402.V2, false, offer(x402.V2, "eip155:84532", baseSepoliaUSDC, sellerPayTo, halfDollar))
	h := newHarness(t, st, testRules(), trustUpstream(s), opt)
	id := heldRequest(t, h, s)
	ev := <-got
	hd := ev.Hold
	if ev.Type != notify.HoldCreated || hd.ID != id || hd.URL != s.url("/report") || hd.Host != "127.0.0.1" ||
		hd.AmountMicros != 500000 || hd.AmountAtomic != halfDollar || hd.Network != "eip155:84532" || hd.Asset != baseSepoliaUSDC ||
		hd.PayTo != sellerPayTo || len(hd.Reasons) == 0 || hd.Screening == nil || hd.Screening.Sanctions.Status == "" ||
		ev.Budget == nil || ev.Budget.CapMicros != 25_000_000 || ev.ApproveURL != "http://console.example/#hold="+id || hd.ExpiresAt.IsZero() {
		b, _ := json.Marshal(ev)
		t.Fatalf("created event: %s", b)
	}
	if code, out := h.api("POST", "/v1/holds/"+id+"/approve", testToken, map[string]string{"by": "alice", "note": "ok"}); code != 200 {
		t.Fatalf("approve: %d %s", code, out)
	}
	if ev := <-got; ev.Type != notify.HoldApproved || ev.Hold.ResolvedBy != "alice" || ev.Hold.Note != "ok" {
		t.Fatalf("approved event: %+v", ev)
	}
}

// A webhook receiver that hangs holds up no decision: holds are created, approved through the API and
// released while every delivery waits, and the events past the bounded queue are dropped and counted.
func TestWebhookHungReceiverDoesNotBlockDecisions(t *testing.T) {
	release := make(chan struct{})
	entered := make(chan struct{}, 100)
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		entered <- struct{}{}
		<-release
	}))
	defer recv.Close()
	defer close(release)
	st := memory.New()
	opt, sender := withNotifier(t, st, recv.URL, nil, 1)
	s := newSeller(t, x402.V2, false, offer(x402.V2, "eip155:84532", baseSepoliaUSDC, sellerPayTo, halfDollar))
	h := newHarness(t, st, testRules(), trustUpstream(s), opt)
	b := h.buyer()
	first := heldRequest(t, h, s)
	<-entered // the receiver now holds the only delivery worker, for good
	for i := range 5 {
		path := fmt.Sprintf("/report/%d", i)
		resp, body := b.get(s.url(path), nil)
		id := resp.Header.Get(HeaderHold)
		if resp.StatusCode != http.StatusForbidden || id == "" {
			t.Fatalf("hold %d: %d %s", i, resp.StatusCode, body)
		}
		if code, out := h.api("POST", "/v1/holds/"+id+"/approve", testToken, map[string]string{"by": "alice"}); code != 200 {
			t.Fatalf("approve %d: %d %s", i, code, out)
		}
		if ex := b.pay(s.url(path), nil); ex.paid == nil || ex.paid.StatusCode != 200 {
			t.Fatalf("payment %d after approval did not go through", i)
		}
	}
	if code, _ := h.api("POST", "/v1/holds/"+first+"/deny", testToken, map[string]string{"by": "bob"}); code != 200 {
		t.Fatal("deny failed")
	}
	if s.paid.Load() != 5 {
		t.Fatalf("seller paid %d, want 5", s.paid.Load())
	}
	// Dropping is the watcher's business, in the background: wait for it (the deadline only turns a hang
	// into a failure).
	testutil.Eventually(t, 10*time.Second, func() bool { return sender.Dropped.Load() != 0 }, "the watcher dropped a notification")
}
