package notify

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/payguard/payguard/internal/testutil"
	"github.com/payguard/payguard/proxy/view"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

type delivery struct {
	header http.Header
	body   []byte
}

// receiver records deliveries and answers with status(n) for the n-th (1-based).
func receiver(t *testing.T, status func(n int) int) (*httptest.Server, chan delivery) {
	t.Helper()
	got := make(chan delivery, 100)
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- delivery{r.Header.Clone(), b}
		w.WriteHeader(status(int(n.Add(1))))
	}))
	t.Cleanup(srv.Close)
	return srv, got
}

// next is the receiver's next delivery; the deadline only turns a delivery that never comes into a failure.
func next(t *testing.T, got chan delivery) delivery {
	t.Helper()
	select {
	case d := <-got:
		return d
	case <-time.After(10 * time.Second):
		t.Fatal("no delivery reached the receiver")
		return delivery{}
	}
}

func run(t *testing.T, s *Sender) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
}

func sampleEvent() Event {
	h := view.Hold{ID: "hold_1", Status: "pending", Method: "GET", URL: "https://seller.example/x?<b>", Host: "seller.example",
		AmountUSD: "0.50", AmountMicros: 500000, AmountAtomic: "500000", Network: "eip155:8453", PayTo: "0xabc",
		Reasons: []string{"hold: amount $0.50 is above hold_above_usd $0.25"}, ExpiresAt: time.Unix(1700000600, 0).UTC()}
	return New(HoldCreated, h, nil, "http://127.0.0.1:8403/", time.Unix(1700000000, 0))
}

// The receiver can check the body came from payguard: HMAC-SHA256 over "<t>.<body>" with the shared
// secret, computed here independently of Sign; an altered body or a stale timestamp is refused by Verify.
func TestSignatureVerifiable(t *testing.T) {
	secret := []byte("whsec-test-0123456789")
	srv, got := receiver(t, func(int) int { return 200 })
	s := NewSender(Options{Targets: []Target{{URL: srv.URL, Secret: secret}}, Logger: quiet})
	run(t, s)
	ev := sampleEvent()
	s.Send(ev)
	d := next(t, got)
	sig := d.header.Get(HeaderSignature)
	var ts, v1 string
	for _, p := range strings.Split(sig, ",") {
		k, v, _ := strings.Cut(p, "=")
		if k == "t" {
			ts = v
		} else if k == "v1" {
			v1 = v
		}
	}
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(ts + "."))
	m.Write(d.body)
	if want := hex.EncodeToString(m.Sum(nil)); ts == "" || v1 != want {
		t.Fatalf("signature %q; want v1=%s", sig, want)
	}
	if err := Verify(secret, sig, d.body, time.Now(), 5*time.Minute); err != nil {
		t.Fatalf("Verify: %v", err)
	}
	if err := Verify(secret, sig, append([]byte(" "), d.body...), time.Now(), 5*time.Minute); err == nil {
		t.Error("Verify accepted an altered body")
	}
	if err := Verify([]byte("other"), sig, d.body, time.Now(), 5*time.Minute); err == nil {
		t.Error("Verify accepted another secret")
	}
	if err := Verify(secret, sig, d.body, time.Now().Add(time.Hour), 5*time.Minute); err == nil {
		t.Error("Verify accepted a signature an hour old (replay)")
	}
	var back Event
	if err := json.Unmarshal(d.body, &back); err != nil || back.ID != ev.ID || back.Text == "" || back.ApproveURL != "http://127.0.0.1:8403/#hold=hold_1" {
		t.Fatalf("body %s (%v)", d.body, err)
	}
	if d.header.Get(HeaderEvent) != HoldCreated || d.header.Get(HeaderDelivery) != "hold_1:hold.created" {
		t.Errorf("headers %v", d.header)
	}
	// Slack's text: the seller's URL cannot become a link or a mention.
	if strings.Contains(back.Text, "<b>") || !strings.Contains(back.Text, "&lt;b&gt;") {
		t.Errorf("text not escaped for Slack: %q", back.Text)
	}
}

// Without a secret no signature header is sent (nothing pretends to be signed).
func TestNoSecretNoSignature(t *testing.T) {
	srv, got := receiver(t, func(int) int { return 204 })
	s := NewSender(Options{Targets: []Target{{URL: srv.URL}}, Logger: quiet})
	run(t, s)
	s.Send(sampleEvent())
	if d := next(t, got); d.header.Get(HeaderSignature) != "" {
		t.Fatalf("signature without a secret: %q", d.header.Get(HeaderSignature))
	}
}

// A 500 is retried (with backoff) until the receiver takes it; the same event id every time.
func TestRetriesOn500(t *testing.T) {
	srv, got := receiver(t, func(n int) int {
		if n < 3 {
			return 500
		}
		return 200
	})
	s := NewSender(Options{Targets: []Target{{URL: srv.URL, Secret: []byte("k")}}, Backoff: time.Millisecond, Logger: quiet})
	run(t, s)
	s.Send(sampleEvent())
	var ids []string
	for range 3 {
		d := next(t, got)
		ids = append(ids, d.header.Get(HeaderDelivery))
	}
	testutil.Eventually(t, 10*time.Second, func() bool { return s.Sent.Load() == 1 }, "the delivery counted as sent")
	if ids[0] != ids[1] || ids[1] != ids[2] || s.Failed.Load() != 0 {
		t.Fatalf("deliveries %v, failed %d", ids, s.Failed.Load())
	}
}

// A 4xx other than 429 is not retried; MaxAttempts bounds the retries of a receiver that keeps failing.
func TestGivesUp(t *testing.T) {
	srv, got := receiver(t, func(int) int { return 400 })
	s := NewSender(Options{Targets: []Target{{URL: srv.URL}}, Backoff: time.Millisecond, Logger: quiet})
	run(t, s)
	s.Send(sampleEvent())
	next(t, got)
	testutil.Eventually(t, 10*time.Second, func() bool { return s.Failed.Load() == 1 }, "the 400 delivery counted as failed")
	srv5, got5 := receiver(t, func(int) int { return 503 })
	s5 := NewSender(Options{Targets: []Target{{URL: srv5.URL}}, Backoff: time.Millisecond, MaxAttempts: 3, Logger: quiet})
	run(t, s5)
	s5.Send(sampleEvent())
	testutil.Eventually(t, 10*time.Second, func() bool { return s5.Failed.Load() == 1 }, "the 503 delivery counted as failed")
	if len(got5) != 3 || len(got) != 0 {
		t.Fatalf("attempts: 503 receiver %d (want 3), 400 receiver %d more (want 0)", len(got5), len(got))
	}
}

// A receiver that never answers does not hold up Send: the queue is bounded and the rest is dropped and
// counted; another receiver still gets every event.
func TestHungReceiverNeverBlocksSend(t *testing.T) {
	release := make(chan struct{})
	var once sync.Once
	entered := make(chan struct{})
	hung := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		once.Do(func() { close(entered) })
		<-release
	}))
	defer hung.Close()
	defer close(release)
	ok, got := receiver(t, func(int) int { return 200 })
	s := NewSender(Options{Targets: []Target{{URL: hung.URL}, {URL: ok.URL}}, QueueSize: 4, Timeout: time.Hour, Logger: quiet})
	run(t, s)
	s.Send(sampleEvent())
	<-entered // the hung receiver holds its worker
	for range 50 {
		s.Send(sampleEvent()) // must return at once every time
	}
	// The healthy receiver's queue (4) may also overflow while its worker delivers; count what arrived.
	if d := s.Dropped.Load(); d < 50-4 {
		t.Fatalf("dropped %d; want at least %d (hung queue of 4 full)", d, 50-4)
	}
	next(t, got)
}
