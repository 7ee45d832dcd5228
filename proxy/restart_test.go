package proxy

import (
	"net/http"
	"path/filepath"
	"testing"

	"github.com/payguard/payguard/store/bolt"
	"github.com/payguard/payguard/x402"
)

// A proxy restarted on the same bolt file keeps today's spend: the cap counts money paid before the
// restart.
func TestRestartKeepsSpent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "payguard.db")
	s := newSeller(t, x402.V2, false, offer(x402.V2, "eip155:84532", baseSepoliaUSDC, sellerPayTo, cent))
	rules := testRules()
	rules.DailyCapUSD = 15_000 // $0.015: one $0.01 payment fits, a second does not

	st, err := bolt.Open(path, bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, st, rules)
	if ex := h.buyer().pay(s.url("/weather"), nil); ex.paid == nil || ex.paid.StatusCode != http.StatusOK {
		t.Fatalf("first payment did not go through: %+v", ex.first)
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
	if b := h2.budgetState(); b.SpentMicros != 10_000 || b.ReservedMicros != 0 {
		t.Fatalf("after restart the budget is %+v, want spent 10000", b)
	}
	resp, body := h2.buyer().get(s.url("/weather"), nil)
	if r := decodeRefusal(t, resp, body); r.Decision != "block" {
		t.Errorf("second payment after restart: %s, want a daily-cap block", body)
	}
	if s.paid.Load() != 1 {
		t.Errorf("seller paid %d times, want 1", s.paid.Load())
	}
}
