package proxy

import (
	"net/http"
	"testing"

	"github.com/payguard/payguard/store/memory"
	"github.com/payguard/payguard/x402"
)

// A hold raised by a per-option rule (the only option's payTo is not on a strict allowlist) carries the
// amount of the option it holds: the approval queue shows it, and once approved the retry is paid with that
// amount reserved and committed (before, the hold showed $0 and the approved retry failed closed with
// "preflight allowed without a chosen option").
func TestPerOptionHoldCarriesItsAmount(t *testing.T) {
	const twentyCents = "200000" // below hold_above_usd: only the payee rule holds
	s := newSeller(t, x402.V2, false, offer(x402.V2, "eip155:84532", baseSepoliaUSDC, sellerPayTo, twentyCents))
	rules := testRules()
	rules.StrictAllowlist = true
	rules.DomainAllowlist = []string{"127.0.0.1"}
	rules.PayToAllowlist = []string{otherPayTo}
	h := newHarness(t, memory.New(), rules, trustUpstream(s))
	b := h.buyer()

	resp, body := b.get(s.url("/weather"), nil)
	if r := decodeRefusal(t, resp, body); r.Decision != "hold" {
		t.Fatalf("first request: %s", body)
	}
	pending := h.holds("pending")
	if len(pending) != 1 || pending[0].AmountMicros != 200_000 || pending[0].AmountUSD != "0.2" {
		t.Fatalf("%d pending holds (first $%s), want one of $0.20", len(pending), pending[0].AmountUSD)
	}
	if code, out := h.api("POST", "/v1/holds/"+pending[0].ID+"/approve", testToken, map[string]string{"by": "alice"}); code != 200 {
		t.Fatalf("approve: %d %s", code, out)
	}
	ex := b.pay(s.url("/weather"), nil)
	if ex.first.StatusCode != http.StatusPaymentRequired || ex.paid == nil || ex.paid.StatusCode != 200 || s.paid.Load() != 1 {
		t.Fatalf("retry after approval: first %d %s; paid %v; seller paid %d", ex.first.StatusCode, ex.firstBody, ex.paid, s.paid.Load())
	}
	if st := h.budgetState(); st.SpentMicros+st.ReservedMicros != 200_000 {
		t.Fatalf("budget after the approved payment: %+v, want $0.20", st)
	}
}

// The same hold through the guard API (/v1/decide): shown with its amount, reserved once approved.
func TestGuardDecidePerOptionHoldCarriesItsAmount(t *testing.T) {
	rules := testRules()
	rules.StrictAllowlist = true
	rules.DomainAllowlist = []string{"seller.example"}
	rules.PayToAllowlist = []string{otherPayTo}
	h := newHarness(t, memory.New(), rules)
	_, out := h.guardDecide("200000", "https://seller.example/cheap")
	if out.Decision != "hold" || out.HoldID == "" || out.AmountMicros != 200_000 {
		t.Fatalf("held: %s %v $%d micros, want a hold of $0.20", out.Decision, out.Reasons, out.AmountMicros)
	}
	if hs := h.holds("pending"); len(hs) != 1 || hs[0].AmountMicros != 200_000 {
		t.Fatalf("pending holds %+v", hs)
	}
	if code, b := h.api("POST", "/v1/holds/"+out.HoldID+"/approve", testToken, map[string]string{"by": "alice"}); code != 200 {
		t.Fatalf("approve: %d %s", code, b)
	}
	if _, again := h.guardDecide("200000", "https://seller.example/cheap"); again.Decision != "allow" || again.AmountMicros != 200_000 {
		t.Fatalf("after approval: %+v", again)
	}
	if st := h.budgetState(); st.SpentMicros+st.ReservedMicros != 200_000 {
		t.Fatalf("budget %+v, want $0.20 reserved", st)
	}
}
