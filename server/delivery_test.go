package server

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/payguard/payguard/server/core"
)

// disconnectDuringSettle sends a paid check, waits until its /settle is at the facilitator (held there), and
// disconnects as a buyer or a load balancer giving up would; it returns once the server has seen the
// disconnect (its request context is done), with the facilitator still holding /settle.
func (e *env) disconnectDuringSettle(pay map[string]string, release func(), arrived <-chan struct{}) {
	e.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, e.http.URL+"/v1/check?address=0xabc", nil)
	for k, v := range pay {
		req.Header.Set(k, v)
	}
	done := make(chan error, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	<-arrived
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		e.t.Fatalf("the buyer's request ended with %v, want its own cancellation", err)
	}
	<-e.disconnected
}

// newDisconnectEnv is newEnv with a channel closed when the server sees the first paid check's request
// context end (the client went away), observed from a wrapper around the real handler stack.
func newDisconnectEnv(t *testing.T) *env {
	e := newEnv(t)
	e.disconnected = make(chan struct{})
	inner := e.http.Config.Handler
	var seen bool
	e.http.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("PAYMENT-SIGNATURE") != "" && !seen {
			seen = true
			go func() { <-r.Context().Done(); close(e.disconnected) }()
		}
		inner.ServeHTTP(w, r)
	})
	return e
}

// A buyer that disconnects while /settle is in flight does not cancel the settlement: the facilitator
// settles, and the buyer's retry with the same payment gets the result it paid for, with the settlement
// header, without a second verify, settle or work. On the old code the disconnect cancelled /settle, the
// server recorded "unknown", and the retry was refused as a replay: paid, nothing delivered.
func TestDisconnectDuringSettleThenRetryGetsTheResult(t *testing.T) {
	e := newDisconnectEnv(t)
	arrived, release := e.fac.HoldSettle(t)
	pay := payV2(t, challengeV2(t, e.do("GET", "/v1/check?address=0xabc", nil, nil)), "0x91")
	e.disconnectDuringSettle(pay, release, arrived)
	release() // the facilitator completes the transfer
	r := e.do("GET", "/v1/check?address=0xabc", nil, pay)
	if r.StatusCode != 200 || r.json(t)["risk"] != "low" {
		t.Fatalf("retry: %d %s", r.StatusCode, r.body)
	}
	if s := decodeSettle(t, r.Header.Get("PAYMENT-RESPONSE")); s["success"] != true || s["transaction"] != "0xabc" {
		t.Fatalf("retry's settlement header %v", s)
	}
	if e.fac.Settles.Load() != 1 || e.fac.Verifies.Load() != 1 || e.checker.calls.Load() != 1 {
		t.Fatalf("verifies %d settles %d checks %d, want 1 each", e.fac.Verifies.Load(), e.fac.Settles.Load(), e.checker.calls.Load())
	}
	// Asked once more, the same; the payment with another question is a replay.
	if again := e.do("GET", "/v1/check?address=0xabc", nil, pay); again.StatusCode != 200 || string(again.body) != string(r.body) {
		t.Fatalf("second retry: %d %s", again.StatusCode, again.body)
	}
	if other := e.do("GET", "/v1/check?address=0xdef", nil, pay); other.StatusCode != 402 || e.checker.calls.Load() != 1 {
		t.Fatalf("the payment with another question: %d %s", other.StatusCode, other.body)
	}
	if e.fac.Settles.Load() != 1 {
		t.Fatalf("%d settles", e.fac.Settles.Load())
	}
}

// The facilitator refuses the settlement after the buyer went away: the retry gets no result (a 402
// replay refusal) and no second settle; never free work.
func TestDisconnectDuringSettleThatFailsGetsNothing(t *testing.T) {
	for _, mode := range []string{"fail", "5xx"} {
		t.Run(mode, func(t *testing.T) {
			e := newDisconnectEnv(t)
			e.fac.SettleMode.Store(mode)
			arrived, release := e.fac.HoldSettle(t)
			pay := payV2(t, challengeV2(t, e.do("GET", "/v1/check?address=0xabc", nil, nil)), "0x92")
			e.disconnectDuringSettle(pay, release, arrived)
			release() // the facilitator answers with the mode's failure; the retry never reaches /settle
			r := e.do("GET", "/v1/check?address=0xabc", nil, pay)
			switch mode {
			case "fail":
				if r.StatusCode != 402 || r.json(t)["error"] != "invalid_exact_evm_nonce_already_used" {
					t.Fatalf("retry after a failed settlement: %d %s", r.StatusCode, r.body)
				}
			case "5xx": // the outcome is unknown: said again, with the nonce, and still no result
				if r.StatusCode != core.StatusSettlementOutcomeUnknown || r.errCode(t) != core.CodeSettlementOutcomeUnknown {
					t.Fatalf("retry after an unknown settlement: %d %s", r.StatusCode, r.body)
				}
			}
			if e.fac.Settles.Load() != 1 || e.checker.calls.Load() != 1 {
				t.Fatalf("settles %d checks %d, want 1, 1", e.fac.Settles.Load(), e.checker.calls.Load())
			}
		})
	}
}

// A settlement refused while the buyer waited: the 402 with success:false, and its retry gets no result and
// no second settle.
func TestSettleFailureRetryGetsNothing(t *testing.T) {
	e := newEnv(t)
	e.fac.SettleMode.Store("fail")
	pay := payV2(t, challengeV2(t, e.do("GET", "/v1/check?address=0xabc", nil, nil)), "0x93")
	if r := e.do("GET", "/v1/check?address=0xabc", nil, pay); r.StatusCode != 402 {
		t.Fatalf("failed settlement: %d %s", r.StatusCode, r.body)
	}
	e.fac.SettleMode.Store("success")
	r := e.do("GET", "/v1/check?address=0xabc", nil, pay)
	if r.StatusCode != 402 || r.Header.Get("PAYMENT-RESPONSE") != "" || e.fac.Settles.Load() != 1 {
		t.Fatalf("retry: %d %s settles %d", r.StatusCode, r.body, e.fac.Settles.Load())
	}
}

// The retry arrives while /settle is still in flight (the buyer reconnects at once): it waits for the
// outcome, reading the payment's record, and gets the result once the facilitator settles; one settle.
func TestRetryWhileSettleInFlightWaitsForTheOutcome(t *testing.T) {
	e := newDisconnectEnv(t)
	arrived, release := e.fac.HoldSettle(t)
	pay := payV2(t, challengeV2(t, e.do("GET", "/v1/check?address=0xabc", nil, nil)), "0x94")
	e.disconnectDuringSettle(pay, release, arrived)
	got := make(chan result, 1)
	for len(e.deliveries.reads) > 0 {
		<-e.deliveries.reads
	}
	go func() { got <- e.do("GET", "/v1/check?address=0xabc", nil, pay) }()
	<-e.deliveries.reads // the retry found the record settling
	<-e.deliveries.reads // and looked again: it is waiting
	release()
	r := <-got
	if r.StatusCode != 200 || r.json(t)["risk"] != "low" || e.fac.Settles.Load() != 1 || e.checker.calls.Load() != 1 {
		t.Fatalf("retry during settlement: %d %s settles %d", r.StatusCode, r.body, e.fac.Settles.Load())
	}
}

// A result that cannot be recorded for its payment is not sold: the payment is abandoned before /settle
// (503, nothing settled, its claim released), and once the store writes again the same payment is worked for
// and settled.
func TestUnrecordableResultIsNotSettled(t *testing.T) {
	e := newEnv(t)
	pay := payV2(t, challengeV2(t, e.do("GET", "/v1/check?address=0xabc", nil, nil)), "0x95")
	e.deliveries.failPut.Store(true)
	r := e.do("GET", "/v1/check?address=0xabc", nil, pay)
	if r.StatusCode != 503 || r.errCode(t) != core.CodeFacilitatorUnavailable || e.fac.Settles.Load() != 0 {
		t.Fatalf("store down: %d %s settles %d", r.StatusCode, r.body, e.fac.Settles.Load())
	}
	e.deliveries.failPut.Store(false)
	if r := e.do("GET", "/v1/check?address=0xabc", nil, pay); r.StatusCode != 200 || e.fac.Settles.Load() != 1 {
		t.Fatalf("store back: %d %s settles %d", r.StatusCode, r.body, e.fac.Settles.Load())
	}
}
