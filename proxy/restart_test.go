package proxy

import (
	"net/http"
	"path/filepath"
	"testing"

	"github.com/payguard/payguard/store/bolt"
	"github.com/payguard/payguard/x402"
)

// A proxy restarted on the same bolt file keeps today's spend and reservations, its pending holds, its
// unused tickets and the payment headers it has seen: the cap counts money paid before the restart, an
// allowed challenge can still be paid, and a person can still approve a hold. (store/bolt's TestSurvivesKill9
// shows the same state survives kill -9; the interop suite kills the real binary with SIGKILL.)
func TestRestartKeepsState(t *testing.T) {
	path := filepath.Join(t.TempDir(), "payguard.db")
	s := newSeller(t, x402.V2, false, offer(x402.V2, "eip155:84532", baseSepoliaUSDC, sellerPayTo, cent))
	mid := newSeller(t, x402.V2, false, offer(x402.V2, "eip155:84532", baseSepoliaUSDC, sellerPayTo, halfDollar))
	rules := testRules()
	// $0.525: $0.01 paid + $0.01 reserved + the $0.50 hold fit; one more $0.01 after all of them does not.
	rules.DailyCapUSD = 525_000

	st, err := bolt.Open(path, bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, st, rules)
	b := h.buyer()
	paid := b.pay(s.url("/weather"), nil)
	if paid.paid == nil || paid.paid.StatusCode != http.StatusOK {
		t.Fatalf("first payment did not go through: %+v", paid.first)
	}
	// Allowed but not yet paid: a ticket and a $0.01 reservation.
	resp, body := b.get(s.url("/later"), nil)
	if resp.StatusCode != http.StatusPaymentRequired {
		t.Fatalf("second challenge: %d %s", resp.StatusCode, body)
	}
	later := b.readChallenge(resp, body)
	laterReceipt := resp.Header.Get(HeaderReceipt)
	resp, _ = b.get(mid.url("/weather"), nil)
	holdID := resp.Header.Get(HeaderHold)
	if holdID == "" {
		t.Fatalf("no hold for $0.50: %d %v", resp.StatusCode, resp.Header)
	}
	h.srv.Close()
	h.admin.Close()
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	st2, err := bolt.Open(path, bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st2.Close() })
	h2 := newHarness(t, st2, rules)
	b2 := h2.buyer()
	if bs := h2.budgetState(); bs.SpentMicros != 10_000 || bs.ReservedMicros != 10_000 {
		t.Fatalf("after restart the budget is %+v, want spent 10000 and reserved 10000", bs)
	}
	if pending := h2.holds("pending"); len(pending) != 1 || pending[0].ID != holdID {
		t.Fatalf("pending holds after restart = %+v, want %s", pending, holdID)
	}
	// The payment header seen before the restart is still a replay.
	if resp, body := b2.get(s.url("/weather"), http.Header{paid.header: {paid.payment}}); decodeRefusal(t, resp, body).Decision != "block" {
		t.Errorf("replay after restart: %s", body)
	}
	// The ticket issued before the restart releases its payment, under its receipt.
	hdr, val := b2.sign(later, 0, nil)
	resp, body = b2.get(s.url("/later"), http.Header{hdr: {val}})
	if resp.StatusCode != http.StatusOK || resp.Header.Get(HeaderReceipt) != laterReceipt {
		t.Fatalf("payment on a ticket from before the restart: %d %v %s", resp.StatusCode, resp.Header, body)
	}
	// The hold from before the restart is approved and used.
	if code, out := h2.api("POST", "/v1/holds/"+holdID+"/approve", testToken, map[string]string{"by": "alice"}); code != 200 {
		t.Fatalf("approve after restart: %d %s", code, out)
	}
	if ex := b2.pay(mid.url("/weather"), nil); ex.paid == nil || ex.paid.StatusCode != http.StatusOK {
		t.Fatalf("approved hold after restart: %d %s", ex.first.StatusCode, ex.firstBody)
	}
	// $0.52 spent; $0.01 more would pass $0.525.
	resp, body = b2.get(s.url("/weather"), nil)
	if r := decodeRefusal(t, resp, body); r.Decision != "block" {
		t.Errorf("payment over the cap after restart: %s, want a daily-cap block", body)
	}
	if s.paid.Load() != 2 || mid.paid.Load() != 1 {
		t.Errorf("sellers paid %d and %d times, want 2 and 1", s.paid.Load(), mid.paid.Load())
	}
	if bs := h2.budgetState(); bs.SpentMicros != 520_000 || bs.ReservedMicros != 0 {
		t.Errorf("final budget %+v, want spent 520000", bs)
	}
}
