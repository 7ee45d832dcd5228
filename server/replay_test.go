package server

import (
	"sync"
	"testing"
)

// 20 concurrent replays of one payment: the nonce is claimed before /verify, so the facilitator sees one
// verify and one settle, the work runs once, and 19 are refused (402 invalid_exact_evm_nonce_already_used)
// with neither a verify nor the work. On the old code every replay cost a /verify and the full work
// (20 verifies, 20 checks, 1 settle).
func TestConcurrentReplaysCostOneVerify(t *testing.T) {
	e := newEnv(t)
	pay := payV2(t, challengeV2(t, e.do("GET", "/v1/check?address=0xabc", nil, nil)), "0x77")
	const n = 20
	codes := make([]int, n)
	reasons := make([]any, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			r := e.do("GET", "/v1/check?address=0xabc", nil, pay)
			codes[i] = r.StatusCode
			if r.StatusCode == 402 {
				reasons[i] = r.json(t)["error"]
			}
		}()
	}
	close(start)
	wg.Wait()
	ok, refused := 0, 0
	for i := range n {
		switch {
		case codes[i] == 200:
			ok++
		case codes[i] == 402 && reasons[i] == "invalid_exact_evm_nonce_already_used":
			refused++
		default:
			t.Errorf("replay %d: %d %v", i, codes[i], reasons[i])
		}
	}
	if ok != 1 || refused != n-1 || e.fac.Verifies.Load() != 1 || e.fac.Settles.Load() != 1 || e.checker.calls.Load() != 1 {
		t.Fatalf("%d paid, %d refused; facilitator: %d verifies, %d settles; work done %d times; want 1, %d; 1, 1; 1",
			ok, refused, e.fac.Verifies.Load(), e.fac.Settles.Load(), e.checker.calls.Load(), n-1)
	}
}

// A payment that was never sent to /settle (the facilitator could not verify it) is released: the same
// payment presented again once the facilitator is back is verified, worked for and settled.
func TestPaymentNotSettledIsReleased(t *testing.T) {
	e := newEnv(t)
	pay := payV2(t, challengeV2(t, e.do("GET", "/v1/check?address=0xabc", nil, nil)), "0x78")
	e.fac.VerifyMode.Store("down")
	if r := e.do("GET", "/v1/check?address=0xabc", nil, pay); r.StatusCode != 503 {
		t.Fatalf("facilitator down: %d %s", r.StatusCode, r.body)
	}
	e.fac.VerifyMode.Store("valid")
	if r := e.do("GET", "/v1/check?address=0xabc", nil, pay); r.StatusCode != 200 || e.fac.Settles.Load() != 1 {
		t.Fatalf("the same payment after the outage: %d %s, settles %d", r.StatusCode, r.body, e.fac.Settles.Load())
	}
	if r := e.do("GET", "/v1/check?address=0xabc", nil, pay); r.StatusCode != 402 || e.fac.Verifies.Load() != 2 {
		t.Fatalf("replay after settlement: %d, verifies %d (want no third)", r.StatusCode, e.fac.Verifies.Load())
	}
}
