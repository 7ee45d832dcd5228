package server

import (
	"sync"
	"testing"
)

// 20 concurrent replays of one payment: the nonce is claimed before /verify, so the facilitator sees one
// verify and one settle, the work runs once, and the 19 others are refused (402
// invalid_exact_evm_nonce_already_used) or, when they come after its result was kept, given that same
// result again (SPEC §8.6), with neither a verify nor the work. On the old code every replay cost a /verify and the full work
// (20 verifies, 20 checks, 1 settle).
func TestConcurrentReplaysCostOneVerify(t *testing.T) {
	e := newEnv(t)
	pay := payV2(t, challengeV2(t, e.do("GET", "/v1/check?address=0xabc", nil, nil)), "0x77")
	const n = 20
	codes := make([]int, n)
	reasons := make([]any, n)
	bodies := make([]string, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			r := e.do("GET", "/v1/check?address=0xabc", nil, pay)
			codes[i], bodies[i] = r.StatusCode, string(r.body)
			if r.StatusCode == 402 {
				reasons[i] = r.json(t)["error"]
			}
		}()
	}
	close(start)
	wg.Wait()
	ok, refused := 0, 0
	var result string
	for i := range n {
		switch {
		case codes[i] == 200 && (result == "" || bodies[i] == result):
			result = bodies[i]
			ok++
		case codes[i] == 402 && reasons[i] == "invalid_exact_evm_nonce_already_used":
			refused++
		default:
			t.Errorf("replay %d: %d %v", i, codes[i], reasons[i])
		}
	}
	if ok < 1 || ok+refused != n || e.fac.Verifies.Load() != 1 || e.fac.Settles.Load() != 1 || e.checker.calls.Load() != 1 {
		t.Fatalf("%d answered, %d refused; facilitator: %d verifies, %d settles; work done %d times; want %d in all; 1, 1; 1",
			ok, refused, e.fac.Verifies.Load(), e.fac.Settles.Load(), e.checker.calls.Load(), n)
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
	if r := e.do("GET", "/v1/check?address=0xabc", nil, pay); r.StatusCode != 200 || e.fac.Verifies.Load() != 2 || e.fac.Settles.Load() != 1 {
		t.Fatalf("retry after settlement: %d, verifies %d settles %d (want the kept result, no third verify)", r.StatusCode, e.fac.Verifies.Load(), e.fac.Settles.Load())
	}
}
