package proxy

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/payguard/payguard/internal/readlimit"
	"github.com/payguard/payguard/x402"
)

// blockingBody blocks its reads until it is closed.
type blockingBody struct {
	closed chan struct{}
	n      atomic.Int32
}

func (b *blockingBody) Read([]byte) (int, error) {
	<-b.closed
	return 0, errors.New("read on closed body")
}

func (b *blockingBody) Close() error {
	if b.n.Add(1) == 1 {
		close(b.closed)
	}
	return nil
}

// A body still being read when the deadline is up is closed, and the read ends; a deadline stopped in
// time closes nothing, and is used again for the next body without closing it later.
func TestReadDeadline(t *testing.T) {
	slow := &blockingBody{closed: make(chan struct{})}
	d := startReadDeadline(slow, time.Millisecond)
	if _, err := readlimit.ReadAll(slow, 100, -1); err == nil {
		t.Fatal("the blocked read ended without an error")
	}
	if d.stop() {
		t.Fatal("stop found a fired deadline not fired")
	}
	for range 100 {
		fast := &blockingBody{closed: make(chan struct{})}
		d := startReadDeadline(fast, time.Hour)
		if !d.stop() {
			t.Fatal("a deadline of an hour fired")
		}
		if fast.n.Load() != 0 {
			t.Fatal("a body read in time was closed")
		}
	}
}

// peekBody hands back a body read whole as a fresh reader, and one too long for the limit as its prefix
// followed by the rest.
func TestPeekBodyPutsTheBodyBack(t *testing.T) {
	for _, body := range []string{"", "{}", strings.Repeat("a", maxChallengeBody), strings.Repeat("b", maxChallengeBody+10)} {
		for _, length := range []int64{int64(len(body)), -1} {
			resp := &http.Response{Body: io.NopCloser(strings.NewReader(body)), ContentLength: length}
			prefix, complete, err := peekBody(resp)
			if err != nil || complete != (len(body) <= maxChallengeBody) || string(prefix) != body[:min(len(body), maxChallengeBody+1)] {
				t.Fatalf("peekBody(%d bytes, length %d) = %d bytes, complete %v, %v", len(body), length, len(prefix), complete, err)
			}
			again, err := io.ReadAll(resp.Body)
			if err != nil || string(again) != body {
				t.Fatalf("body after peekBody: %d bytes, %v; want %d", len(again), err, len(body))
			}
			if err := resp.Body.Close(); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// Headers set from one allocation stay apart: adding a value to one never changes the next.
func TestHeaderValuesStayApart(t *testing.T) {
	h := http.Header{}
	var hv headerValues
	for _, k := range []string{"A", "B", "C", "D", "E", "F"} {
		hv.set(h, k, k+"1")
	}
	h.Add("A", "a2")
	h.Add("C", "c2")
	for _, k := range []string{"B", "D", "E", "F"} {
		if got := h.Values(k); len(got) != 1 || got[0] != k+"1" {
			t.Fatalf("%s = %q after adding to its neighbours", k, got)
		}
	}
	if got := h.Values("A"); len(got) != 2 || got[0] != "A1" || got[1] != "a2" {
		t.Fatalf("A = %q", got)
	}
	var lower headerValues
	lower.set(h, "x-payguard-decision", "allow") // a key in another spelling is canonicalized
	if h.Get(HeaderDecision) != "allow" {
		t.Fatalf("headers %v", h)
	}
}

// An allowed option the challenge does not have is not narrowed to anything: an error (the 402 is refused).
func TestNarrowOutOfRangeFails(t *testing.T) {
	pr, err := x402.ParsePaymentRequired([]byte(benchChallenge))
	if err != nil {
		t.Fatal(err)
	}
	for _, chosen := range []int{-1, len(pr.Accepts)} {
		resp := &http.Response{Header: http.Header{}, Body: http.NoBody}
		if err := narrowResponse(resp, pr, nil, chosen, challengeBody{}, fromHeader, &headerValues{}); err == nil {
			t.Fatalf("narrowed to option %d of %d", chosen, len(pr.Accepts))
		}
	}
}
