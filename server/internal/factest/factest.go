// Package factest is an httptest x402 facilitator for the server's tests (HTTP and MCP): /supported,
// /verify and /settle with switchable answers and counters, so a test can say exactly what reached the
// facilitator (nothing, a verify, a settle).
package factest

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
)

// Facilitator answers as its modes say:
//   - VerifyMode: "valid" (default), "invalid" (400 with an invalidReason), "5xx" (500), "down" (503);
//   - SettleMode: "success" (default), "fail" ({success:false}), "5xx" (502), "garbage" (not JSON),
//     "reset" (the connection is closed without an answer).
type Facilitator struct {
	Srv                    *httptest.Server
	Verifies, Settles      atomic.Int32
	VerifyMode, SettleMode atomic.Value // string
	lastSettle             atomic.Value // []byte
	hold                   atomic.Pointer[settleHold]
}

// settleHold keeps /settle requests waiting (HoldSettle).
type settleHold struct {
	arrived chan struct{}
	release chan struct{}
	once    sync.Once
}

// HoldSettle makes every later /settle wait, after it was counted, until release is called (the facilitator
// is executing the transfer); arrived receives once per waiting /settle. release is also called when the
// test ends.
func (f *Facilitator) HoldSettle(t testing.TB) (arrived <-chan struct{}, release func()) {
	h := &settleHold{arrived: make(chan struct{}, 64), release: make(chan struct{})}
	f.hold.Store(h)
	release = func() { h.once.Do(func() { close(h.release) }) }
	t.Cleanup(release)
	return h.arrived, release
}

// New starts a facilitator that names payer in its answers; it stops with the test.
func New(t testing.TB, payer string) *Facilitator {
	f := &Facilitator{}
	f.VerifyMode.Store("valid")
	f.SettleMode.Store("success")
	f.Srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		switch r.URL.Path {
		case "/supported":
			w.Write([]byte(`{"kinds":[{"x402Version":2,"scheme":"exact","network":"eip155:84532"},{"x402Version":1,"scheme":"exact","network":"base-sepolia"}]}`))
		case "/verify":
			f.Verifies.Add(1)
			switch f.VerifyMode.Load().(string) {
			case "valid":
				w.Write([]byte(`{"isValid":true,"payer":"` + payer + `"}`))
			case "invalid":
				w.WriteHeader(http.StatusBadRequest)
				w.Write([]byte(`{"isValid":false,"invalidReason":"invalid_exact_evm_payload_signature","payer":"` + payer + `"}`))
			case "5xx":
				w.WriteHeader(http.StatusInternalServerError)
			case "down":
				w.WriteHeader(http.StatusServiceUnavailable)
			}
		case "/settle":
			f.Settles.Add(1)
			f.lastSettle.Store(body)
			if h := f.hold.Load(); h != nil {
				h.arrived <- struct{}{}
				<-h.release
			}
			switch f.SettleMode.Load().(string) {
			case "success":
				w.Write([]byte(`{"success":true,"payer":"` + payer + `","transaction":"0xabc","network":"eip155:84532"}`))
			case "fail":
				w.Write([]byte(`{"success":false,"errorReason":"insufficient_funds","transaction":"","network":"eip155:84532"}`))
			case "5xx":
				w.WriteHeader(http.StatusBadGateway)
			case "garbage":
				w.Write([]byte(`<html>`))
			case "reset":
				hj, _ := w.(http.Hijacker)
				c, _, _ := hj.Hijack()
				c.Close()
			}
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(f.Srv.Close)
	return f
}

// Calls counts the verify and settle requests received.
func (f *Facilitator) Calls() int { return int(f.Verifies.Load() + f.Settles.Load()) }

// LastSettle is the body of the last /settle request (nil before any).
func (f *Facilitator) LastSettle() []byte {
	b, _ := f.lastSettle.Load().([]byte)
	return b
}
