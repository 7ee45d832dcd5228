package proxy

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/payguard/payguard/store/memory"
	"github.com/payguard/payguard/x402"
)

// uptoMCP is an upto payment for MCP's params._meta["x402/payment"]: the payload the SDK's upto client
// signs, as a plain JSON object.
func uptoMCP(t *testing.T, pr *x402.PaymentRequired, edit ...func(*x402.PaymentPayload, map[string]any)) map[string]any {
	t.Helper()
	var e func(*x402.PaymentPayload, map[string]any)
	if len(edit) > 0 {
		e = edit[0]
	}
	pl, err := x402.DecodePaymentPayloadHeader(signUpto(t, pr, e))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(pl)
	var m map[string]any
	json.Unmarshal(b, &m)
	return m
}

// upto over MCP tool calls goes through the same mechanism as over HTTP: the maximum is judged and
// reserved, the Permit2 authorization is bound by the ticket, the _meta settlement's amount is the spend
// (the rest released), and a settlement above the maximum is an alarm that holds the seller's next call.
func TestMCPUpto(t *testing.T) {
	t.Run("settled usage is the spend", func(t *testing.T) {
		s := newMCPSeller(t, "both", false, uptoOffer("200000"))
		s.usage = "70000"
		h := newHarness(t, memory.New(), testRules())
		b := h.mcpBuyer(s.url())
		_, first := b.call(nil)
		pr := termsOf(t, first)
		if pr == nil || len(pr.Accepts) != 1 || pr.Accepts[0].Scheme != "upto" {
			t.Fatalf("terms %s", allTerms(first))
		}
		_, paid := b.call(map[string]any{"x402/payment": uptoMCP(t, pr)})
		if res, _ := paid["result"].(map[string]any); res == nil || res["isError"] == true {
			t.Fatalf("paid call = %v", paid)
		}
		if st := h.budgetState(); st.SpentMicros != 70000 || st.ReservedMicros != 0 {
			t.Fatalf("budget spent %d reserved %d, want 70000 and 0", st.SpentMicros, st.ReservedMicros)
		}
	})
	t.Run("a maximum over the cap never reaches the buyer", func(t *testing.T) {
		s := newMCPSeller(t, "both", false, uptoOffer("5000000"))
		h := newHarness(t, memory.New(), testRules())
		_, first := h.mcpBuyer(s.url()).call(nil)
		if !strings.Contains(allTerms(first), "upto maximum $5 exceeds max $1") || termsOf(t, first) != nil {
			t.Fatalf("answer %s", allTerms(first))
		}
	})
	t.Run("the Permit2 authorization is bound: another spender never reaches the seller", func(t *testing.T) {
		s := newMCPSeller(t, "both", false, uptoOffer("200000"))
		s.usage = "1000"
		h := newHarness(t, memory.New(), testRules())
		b := h.mcpBuyer(s.url())
		_, first := b.call(nil)
		seen := s.x402In.Load()
		_, paid := b.call(map[string]any{"x402/payment": uptoMCP(t, termsOf(t, first),
			func(_ *x402.PaymentPayload, a map[string]any) { a["spender"] = x402.ExactPermit2ProxyAddress })})
		if e, _ := paid["error"].(map[string]any); e == nil || !strings.Contains(allTerms(paid), "spender") {
			t.Fatalf("answer %v", paid)
		}
		if s.x402In.Load() != seen || s.paid.Load() != 0 {
			t.Fatal("the payment reached the seller")
		}
	})
	t.Run("a settlement above the maximum is an alarm", func(t *testing.T) {
		s := newMCPSeller(t, "both", false, uptoOffer("200000"))
		s.usage, s.uptoClaim = "1000", "999999"
		h := newHarness(t, memory.New(), testRules())
		b := h.mcpBuyer(s.url())
		_, first := b.call(nil)
		b.call(map[string]any{"x402/payment": uptoMCP(t, termsOf(t, first))})
		if st := h.budgetState(); st.SpentMicros != 200000 {
			t.Fatalf("spent %d, want the whole maximum", st.SpentMicros)
		}
		_, next := b.call(nil)
		if !strings.Contains(allTerms(next), "reported a settlement outside its authorization") || termsOf(t, next) != nil {
			t.Fatalf("next call: %s", allTerms(next))
		}
	})
}
