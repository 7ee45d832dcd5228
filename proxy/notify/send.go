package notify

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/payguard/payguard/internal/egress"
)

// Headers on every delivery. The signature is Stripe's scheme: t=<unix seconds>,v1=<hex HMAC-SHA256 over
// "<t>.<body>">, so a receiver can refuse a replayed or altered body (Verify).
const (
	HeaderSignature = "X-Payguard-Signature"
	HeaderEvent     = "X-Payguard-Event"
	HeaderDelivery  = "X-Payguard-Delivery"
)

// Target is one webhook receiver. Secret nil sends no signature.
type Target struct {
	URL    string
	Secret []byte
}

// Options configure a Sender.
type Options struct {
	Targets     []Target
	QueueSize   int           // events waiting per target (default 256)
	MaxAttempts int           // tries per event (default 5)
	Timeout     time.Duration // one attempt (default 5 s)
	Backoff     time.Duration // the first retry's wait, doubled each time up to 1 min (default 1 s)
	Client      *http.Client  // default: a client that never follows redirects
	Logger      *slog.Logger
	Now         func() time.Time
}

// Sender delivers events to every target from a bounded queue per target, one worker each, so a receiver
// that hangs delays only its own events, and a full queue drops (and counts) instead of blocking.
type Sender struct {
	o       Options
	queues  []chan []byte
	wg      sync.WaitGroup
	Dropped atomic.Int64 // events refused because a queue was full
	Failed  atomic.Int64 // events given up after MaxAttempts
	Sent    atomic.Int64 // events a receiver accepted (2xx)
}

// NewSender builds a sender; Run starts its workers.
func NewSender(o Options) *Sender {
	if o.QueueSize <= 0 {
		o.QueueSize = 256
	}
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = 5
	}
	if o.Timeout <= 0 {
		o.Timeout = 5 * time.Second
	}
	if o.Backoff <= 0 {
		o.Backoff = time.Second
	}
	if o.Client == nil {
		o.Client = &http.Client{Transport: egress.Transport(), CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	s := &Sender{o: o}
	for range o.Targets {
		s.queues = append(s.queues, make(chan []byte, o.QueueSize))
	}
	return s
}

// Run delivers until ctx ends; events still queued then are dropped.
func (s *Sender) Run(ctx context.Context) {
	for i := range s.o.Targets {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			for {
				select {
				case <-ctx.Done():
					return
				case body := <-s.queues[i]:
					s.deliver(ctx, i, body)
				}
			}
		}()
	}
	s.wg.Wait()
}

// Send queues ev for every target without waiting: never on a decision's path.
func (s *Sender) Send(ev Event) {
	body, err := json.Marshal(ev)
	if err != nil {
		s.o.Logger.Error("notify: event not encodable", "event", ev.ID, "error", err.Error())
		return
	}
	for i, q := range s.queues {
		select {
		case q <- body:
		default:
			s.Dropped.Add(1)
			s.o.Logger.Warn("notify: webhook queue full; event dropped", "event", ev.ID, "target", i)
		}
	}
}

// deliver tries one event up to MaxAttempts times; connection errors, 5xx and 429 are retried after an
// exponential, jittered wait.
func (s *Sender) deliver(ctx context.Context, i int, body []byte) {
	var meta struct{ ID, Type string }
	_ = json.Unmarshal(body, &meta)
	wait := s.o.Backoff
	for attempt := 1; ; attempt++ {
		status, err := s.post(ctx, s.o.Targets[i], body, meta.ID, meta.Type)
		if err == nil && status/100 == 2 {
			s.Sent.Add(1)
			return
		}
		retry := err != nil || status >= 500 || status == http.StatusTooManyRequests
		// The URL is a secret (Slack's carries its key): the log names the target by index only.
		s.o.Logger.Warn("notify: delivery failed", "event", meta.ID, "target", i, "attempt", attempt,
			"status", status, "error", errString(err), "retry", retry && attempt < s.o.MaxAttempts)
		if !retry || attempt >= s.o.MaxAttempts {
			s.Failed.Add(1)
			return
		}
		d := wait/2 + rand.N(wait/2+1)
		select {
		case <-ctx.Done():
			return
		case <-time.After(d):
		}
		wait = min(2*wait, time.Minute)
	}
}

func (s *Sender) post(ctx context.Context, t Target, body []byte, id, typ string) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, s.o.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.URL, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "payguard-notify/1")
	req.Header.Set(HeaderEvent, typ)
	req.Header.Set(HeaderDelivery, id)
	if t.Secret != nil {
		req.Header.Set(HeaderSignature, Sign(t.Secret, s.o.Now(), body))
	}
	resp, err := s.o.Client.Do(req)
	if err != nil {
		return 0, redact(err)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	return resp.StatusCode, nil
}

// redact drops the URL from a client error: it may carry the webhook's key.
func redact(err error) error {
	var ue interface{ Unwrap() error }
	if errors.As(err, &ue) {
		if inner := ue.Unwrap(); inner != nil {
			return inner
		}
	}
	return err
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// Sign is the X-Payguard-Signature value for body sent at t.
func Sign(secret []byte, t time.Time, body []byte) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	return "t=" + ts + ",v1=" + mac(secret, ts, body)
}

func mac(secret []byte, ts string, body []byte) string {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(ts))
	m.Write([]byte("."))
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

// Verify checks a signature header against body, refusing one older or newer than tolerance (replays).
func Verify(secret []byte, header string, body []byte, now time.Time, tolerance time.Duration) error {
	var ts string
	var sigs []string
	for _, part := range strings.Split(header, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k {
		case "t":
			ts = v
		case "v1":
			sigs = append(sigs, v)
		}
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || len(sigs) == 0 {
		return errors.New("notify: signature header lacks t= or v1=")
	}
	if d := now.Sub(time.Unix(sec, 0)); d > tolerance || d < -tolerance {
		return fmt.Errorf("notify: signature timestamp %s is outside the %s tolerance", time.Unix(sec, 0).UTC(), tolerance)
	}
	want := mac(secret, ts, body)
	for _, s := range sigs {
		if hmac.Equal([]byte(s), []byte(want)) {
			return nil
		}
	}
	return errors.New("notify: signature does not match")
}
