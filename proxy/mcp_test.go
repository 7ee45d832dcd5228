package proxy

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/payguard/payguard/store/memory"
	"github.com/payguard/payguard/x402"
)

// The x402 MCP forms an SDK or a common server writes, as JSON answers and as event streams: each is
// decided like an HTTP 402 (narrowed, reserved, one ticket), paid once, settled from _meta and committed; a
// replay of the same _meta payment is refused before the seller.
func TestMCPAllowNarrowsPaysOnceAndCommits(t *testing.T) {
	for _, form := range []string{"both", "text", "wrapped", "error", "snake", "v1"} {
		for _, sse := range []bool{false, true} {
			name := form + map[bool]string{false: "/json", true: "/sse"}[sse]
			t.Run(name, func(t *testing.T) {
				network, asset := "eip155:84532", baseSepoliaUSDC
				bad := "eip155:1"
				if form == "v1" {
					network, bad = "base-sepolia", "ethereum"
				}
				s := newMCPSeller(t, form, sse,
					offer(2, bad, "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48", sellerPayTo, "5000"),
					offer(2, network, asset, sellerPayTo, cent))
				h := newHarness(t, memory.New(), testRules())
				b := h.mcpBuyer(s.url())

				resp, first := b.call(nil)
				if resp.Header.Get(HeaderDecision) != "" && resp.Header.Get(HeaderDecision) != "allow" {
					t.Errorf("decision header %q", resp.Header.Get(HeaderDecision))
				}
				pr := termsOf(t, first)
				if pr == nil || len(pr.Accepts) != 1 || pr.Accepts[0].Network != network {
					t.Fatalf("the buyer saw %v, want only the allowed option: %s", pr, allTerms(first))
				}
				if strings.Contains(allTerms(first), bad) {
					t.Fatalf("the refused option is still readable somewhere in the answer: %s", allTerms(first))
				}
				pay := signMCP(t, pr, 0, nil)
				_, paid := b.call(map[string]any{"x402/payment": pay})
				res, _ := paid["result"].(map[string]any)
				if res == nil || res["isError"] == true {
					t.Fatalf("paid call = %v", paid)
				}
				if s.paid.Load() != 1 || s.settled.Load() != 10000 {
					t.Fatalf("seller settled %d payments, %d units; want 1, 10000", s.paid.Load(), s.settled.Load())
				}
				st := h.budgetState()
				if st.SpentMicros != 10000 || st.ReservedMicros != 0 {
					t.Errorf("budget spent %d reserved %d, want 10000 and 0 (the _meta settlement committed)", st.SpentMicros, st.ReservedMicros)
				}
				// The same payment again is a replay: refused with a JSON-RPC error, the seller never sees it.
				seen := s.x402In.Load()
				_, again := b.call(map[string]any{"x402/payment": pay})
				e, _ := again["error"].(map[string]any)
				if e == nil || !strings.Contains(allTerms(again), "replay") {
					t.Errorf("replay answer = %v", again)
				}
				if s.x402In.Load() != seen {
					t.Error("a replayed _meta payment reached the seller")
				}
			})
		}
	}
}

// Over the per-payment cap: the terms never reach the buyer; the answer is a tool error naming the
// decision, reasons and receipt; a payment forged from the seller's own terms is refused before the seller.
func TestMCPBlockAnswersReadableRefusal(t *testing.T) {
	for _, form := range []string{"both", "error"} {
		for _, sse := range []bool{false, true} {
			t.Run(form+map[bool]string{false: "/json", true: "/sse"}[sse], func(t *testing.T) {
				s := newMCPSeller(t, form, sse, offer(2, "eip155:84532", baseSepoliaUSDC, sellerPayTo, cent))
				rules := testRules()
				rules.MaxPerPaymentUSD = 5000 // $0.005
				h := newHarness(t, memory.New(), rules)
				b := h.mcpBuyer(s.url())
				_, first := b.call(nil)
				if termsOf(t, first) != nil || strings.Contains(allTerms(first), `"accepts"`) {
					t.Fatalf("a blocked payment's terms reached the buyer: %s", allTerms(first))
				}
				var refusal map[string]any
				if form == "error" {
					e, _ := first["error"].(map[string]any)
					refusal, _ = e["data"].(map[string]any)
				} else {
					res, _ := first["result"].(map[string]any)
					if res["isError"] != true {
						t.Fatalf("refusal is not a tool error: %v", first)
					}
					refusal, _ = res["structuredContent"].(map[string]any)
				}
				if refusal["decision"] != "block" || refusal["receipt"] == nil || !strings.Contains(allTerms(refusal), "max_per_payment") && !strings.Contains(allTerms(refusal), "per-payment") && !strings.Contains(allTerms(refusal), "exceeds") {
					t.Fatalf("refusal = %v", refusal)
				}
				pr := &x402.PaymentRequired{X402Version: 2, Resource: &x402.ResourceInfo{URL: "mcp://tool/weather"}, Accepts: s.offers}
				_, forged := b.call(map[string]any{"x402/payment": signMCP(t, pr, 0, nil)})
				if forged["error"] == nil || s.x402In.Load() != 0 || s.paid.Load() != 0 {
					t.Fatalf("forged payment: %v; seller saw %d x402 bodies, paid %d", forged, s.x402In.Load(), s.paid.Load())
				}
			})
		}
	}
}

// A held MCP payment is approved through the admin API; the agent's next call is released once and paid.
func TestMCPHoldApprovedThenPaidOnce(t *testing.T) {
	s := newMCPSeller(t, "both", true, offer(2, "eip155:84532", baseSepoliaUSDC, sellerPayTo, halfDollar))
	h := newHarness(t, memory.New(), testRules())
	b := h.mcpBuyer(s.url())
	_, first := b.call(nil)
	res, _ := first["result"].(map[string]any)
	refusal, _ := res["structuredContent"].(map[string]any)
	hold, _ := refusal["hold"].(map[string]any)
	if refusal["decision"] != "hold" || hold == nil {
		t.Fatalf("held answer = %v", first)
	}
	pending := h.holds("pending")
	if len(pending) != 1 || pending[0].URL != mcpEndpoint(strings.TrimPrefix(s.srv.URL, "http://"), "weather") {
		t.Fatalf("pending holds = %+v", pending)
	}
	if code, out := h.api("POST", "/v1/holds/"+hold["id"].(string)+"/approve", testToken, map[string]string{"by": "alice"}); code != 200 {
		t.Fatalf("approve: %d %s", code, out)
	}
	_, second := b.call(nil)
	pr := termsOf(t, second)
	if pr == nil {
		t.Fatalf("after approval: %v", second)
	}
	_, paid := b.call(map[string]any{"x402/payment": signMCP(t, pr, 0, nil)})
	if r, _ := paid["result"].(map[string]any); r == nil || r["isError"] == true || s.paid.Load() != 1 {
		t.Fatalf("paid after approval = %v, seller paid %d", paid, s.paid.Load())
	}
	// The approval is spent: a second payment on new terms is held again, never paid.
	_, third := b.call(nil)
	if termsOf(t, third) != nil {
		t.Errorf("a used approval released terms again: %v", third)
	}
}

// A settlement failure in _meta keeps the reservation (SPEC §11.4) and the seller's fresh terms go on with
// nothing to pay.
func TestMCPSettlementFailureKeepsReservation(t *testing.T) {
	s := newMCPSeller(t, "both", false, offer(2, "eip155:84532", baseSepoliaUSDC, sellerPayTo, cent))
	s.settle = false
	h := newHarness(t, memory.New(), testRules())
	b := h.mcpBuyer(s.url())
	_, first := b.call(nil)
	_, _ = b.call(map[string]any{"x402/payment": signMCP(t, termsOf(t, first), 0, nil)})
	st := h.budgetState()
	if st.SpentMicros != 0 || st.ReservedMicros != 10000 {
		t.Errorf("budget spent %d reserved %d after a failed settlement, want 0 and 10000", st.SpentMicros, st.ReservedMicros)
	}
}

// Traffic that carries nothing of x402 passes byte for byte.
func TestMCPPassThroughUntouched(t *testing.T) {
	s := newMCPSeller(t, "both", false)
	h := newHarness(t, memory.New(), testRules())
	b := h.mcpBuyer(s.url())
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"progressToken":7}}}`)
	_, msgs := b.post(body)
	if len(msgs) != 1 {
		t.Fatalf("answer %v", msgs)
	}
	if all := s.received(); len(all) > 0 {
		got := all[len(all)-1]
		if string(got) != string(body) {
			t.Errorf("seller got %s, want the body unchanged", got)
		}
	} else {
		t.Error("the seller got nothing")
	}
	j, _ := json.Marshal(msgs[0])
	if !strings.Contains(string(j), `"tools":[]`) {
		t.Errorf("answer changed: %s", j)
	}
}

// The official Python MCP buyer (x402MCPSession) sends optional members as null (extensions, resource's
// description, mimeType, ...): they read as absent, so its payment matches its ticket and is released.
func TestMCPPythonNullsReadAsAbsent(t *testing.T) {
	s := newMCPSeller(t, "both", false, offer(2, "eip155:84532", baseSepoliaUSDC, sellerPayTo, cent))
	h := newHarness(t, memory.New(), testRules())
	b := h.mcpBuyer(s.url())
	_, first := b.call(nil)
	pay := signMCP(t, termsOf(t, first), 0, nil)
	pay["extensions"] = nil
	res := pay["resource"].(map[string]any)
	res["serviceName"], res["tags"], res["iconUrl"] = nil, nil, nil
	_, paid := b.call(map[string]any{"x402/payment": pay})
	if r, _ := paid["result"].(map[string]any); r == nil || s.paid.Load() != 1 {
		t.Fatalf("a payment with null optional members = %v, seller paid %d", paid, s.paid.Load())
	}
}
