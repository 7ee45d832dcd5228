package proxy

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/payguard/payguard/store/memory"
	"github.com/payguard/payguard/x402"
)

// Every place a JSON-RPC request can carry a payment other than params._meta["x402/payment"] of a
// tools/call request, and every reading peers may disagree on, is refused with a JSON-RPC error naming the
// reason, and nothing that mentions x402 reaches the seller. Each attack carries a payment that payguard
// would release in its right place (a ticket is waiting for it), so only the guard stops it.
func TestMCPPaymentAttacksRefused(t *testing.T) {
	pay := func(t *testing.T, h *harness, s *mcpSeller) string {
		b := h.mcpBuyer(s.url())
		_, first := b.call(nil)
		pr := termsOf(t, first)
		if pr == nil {
			t.Fatalf("no terms: %v", first)
		}
		raw, _ := json.Marshal(signMCP(t, pr, 0, nil))
		return string(raw)
	}
	call := func(meta string) string {
		return `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"weather","arguments":{},` + meta + `}}`
	}
	deep := strings.Repeat(`{"a":`, 40) + "1" + strings.Repeat("}", 40)
	for _, tc := range []struct {
		name, want string
		body       func(p string) string
		header     bool // also send a PAYMENT-SIGNATURE header
		ctype      string
	}{
		{"notification", "notification", func(p string) string {
			return `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"weather","_meta":{"x402/payment":` + p + `}}}`
		}, false, ""},
		{"two payments in a batch", "2 x402 payment", func(p string) string {
			return "[" + call(`"_meta":{"x402/payment":`+p+`}`) + "," + strings.Replace(call(`"_meta":{"x402/payment":`+p+`}`), `"id":9`, `"id":10`, 1) + "]"
		}, false, ""},
		{"nested batch", "outside", func(p string) string { return "[[" + call(`"_meta":{"x402/payment":`+p+`}`) + "]]" }, false, ""},
		{"_META spelling", "outside", func(p string) string { return call(`"_META":{"x402/payment":` + p + `}`) }, false, ""},
		{"meta without underscore", "outside", func(p string) string { return call(`"meta":{"x402/payment":` + p + `}`) }, false, ""},
		{"key in capitals", "outside", func(p string) string { return call(`"_meta":{"X402/Payment":` + p + `}`) }, false, ""},
		{"key with underscore", "outside", func(p string) string { return call(`"_meta":{"x402_payment":` + p + `}`) }, false, ""},
		{"key with trailing space", "outside", func(p string) string { return call(`"_meta":{"x402/payment ":` + p + `}`) }, false, ""},
		{"escaped key in arguments", "outside", func(p string) string {
			return `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"weather","arguments":{"_meta":{"\u0078402/payment":` + p + `}}}}`
		}, false, ""},
		{"duplicate _meta, payment first", "twice", func(p string) string {
			return call(`"_meta":{"x402/payment":` + p + `},"_meta":{}`)
		}, false, ""},
		{"duplicate _meta ignoring case", "twice", func(p string) string {
			return call(`"_Meta":{},"_meta":{"x402/payment":` + p + `}`)
		}, false, ""},
		{"duplicate params", "twice", func(p string) string {
			return `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"weather","_meta":{"x402/payment":` + p + `}},"params":{"name":"weather"}}`
		}, false, ""},
		{"payment in a client's response", "outside", func(p string) string {
			return `{"jsonrpc":"2.0","id":3,"result":{"_meta":{"x402/payment":` + p + `}}}`
		}, false, ""},
		{"payment on another method", "resources/read", func(p string) string {
			return `{"jsonrpc":"2.0","id":9,"method":"resources/read","params":{"uri":"x","_meta":{"x402/payment":` + p + `}}}`
		}, false, ""},
		{"NaN that Python reads", "not valid JSON", func(p string) string {
			return `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"weather","arguments":{"n":NaN},"_meta":{"x402/payment":` + p + `}}}`
		}, false, ""},
		{"nesting deeper than 32", "deeper", func(p string) string {
			return call(`"_meta":{"x402/payment":` + p + `},"x":` + deep)
		}, false, ""},
		{"payment in a text/plain body", "outside", func(p string) string { return call(`"_META":{"x402/payment":` + p + `}`) }, false, "text/plain"},
		{"no Content-Type", "outside", func(p string) string { return call(`"meta":{"x402/payment":` + p + `}`) }, false, "-"},
		{"header and _meta", "both a payment header", func(p string) string { return call(`"_meta":{"x402/payment":` + p + `}`) }, true, ""},
		{"payment is no payload", "not a readable x402 payment", func(p string) string { return call(`"_meta":{"x402/payment":{"x402Version":2}}`) }, false, ""},
		{"forged recipient", "transfer to", func(p string) string {
			var m map[string]any
			json.Unmarshal([]byte(p), &m)
			m["payload"].(map[string]any)["authorization"].(map[string]any)["to"] = otherPayTo
			b, _ := json.Marshal(m)
			return call(`"_meta":{"x402/payment":` + string(b) + `}`)
		}, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newMCPSeller(t, "both", false, offer(2, "eip155:84532", baseSepoliaUSDC, sellerPayTo, cent))
			h := newHarness(t, memory.New(), testRules())
			p := pay(t, h, s)
			body := tc.body(p)
			req, _ := http.NewRequest(http.MethodPost, s.url(), strings.NewReader(body))
			switch tc.ctype {
			case "":
				req.Header.Set("Content-Type", "application/json")
			case "-":
			default:
				req.Header.Set("Content-Type", tc.ctype)
			}
			if tc.header {
				pl, _ := x402.ParsePaymentPayload([]byte(p))
				v, _ := x402.EncodeHeaderJSON(pl)
				req.Header.Set(x402.HeaderPaymentSignature, v)
			}
			resp, err := h.buyer().client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			msgs := readRPC(t, resp)
			if resp.StatusCode != 200 || len(msgs) == 0 {
				t.Fatalf("answer %d %v", resp.StatusCode, msgs)
			}
			for _, m := range msgs {
				e, _ := m["error"].(map[string]any)
				if e == nil || !strings.Contains(fmt.Sprint(e["message"]), tc.want) {
					t.Errorf("answer = %v, want a JSON-RPC error naming %q", m, tc.want)
				}
			}
			if resp.Header.Get(HeaderDecision) != "block" {
				t.Errorf("%s = %q", HeaderDecision, resp.Header.Get(HeaderDecision))
			}
			if n := s.x402In.Load(); n != 0 || s.paid.Load() != 0 {
				t.Errorf("the seller received %d bodies mentioning x402 and settled %d", n, s.paid.Load())
			}
		})
	}
}

// A body over 64 KiB cannot be read whole: it streams on, and is cut off before its end when it turns out
// to mention x402, so the seller never receives a whole request with an unread payment.
func TestMCPLongBodyWithPaymentCutOff(t *testing.T) {
	s := newMCPSeller(t, "both", false, offer(2, "eip155:84532", baseSepoliaUSDC, sellerPayTo, cent))
	h := newHarness(t, memory.New(), testRules())
	b := h.mcpBuyer(s.url())
	_, first := b.call(nil)
	raw, _ := json.Marshal(signMCP(t, termsOf(t, first), 0, nil))
	pad := strings.Repeat("a", 70<<10)
	body := `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"weather","arguments":{"pad":"` + pad +
		`"},"_meta":{"x402/payment":` + string(raw) + `}}}`
	req, _ := http.NewRequest(http.MethodPost, s.url(), strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if resp, err := h.buyer().client.Do(req); err == nil {
		resp.Body.Close()
		if resp.StatusCode == 200 {
			t.Errorf("a long body with a payment was answered 200")
		}
	}
	if s.paid.Load() != 0 {
		t.Fatal("a payment in a long body reached the seller and was settled")
	}
	for _, got := range s.received() {
		if strings.Contains(string(got), "x402/payment") {
			t.Fatalf("the seller received the payment (%d bytes)", len(got))
		}
	}
	// The same length without x402 passes whole.
	plain := `{"jsonrpc":"2.0","id":10,"method":"tools/list","params":{"pad":"` + pad + `"}}`
	req, _ = http.NewRequest(http.MethodPost, s.url(), strings.NewReader(plain))
	req.Header.Set("Content-Type", "application/json")
	resp, err := h.buyer().client.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("a long body without x402: %v %v", resp, err)
	}
	resp.Body.Close()
	// The seller records each body when its handler has read it: the cut-off body of the first call may be
	// recorded after this one, so the plain body is looked for among all, not taken as the last.
	all := s.received()
	whole := false
	for _, got := range all {
		whole = whole || string(got) == plain
	}
	if !whole {
		sizes := make([]int, len(all))
		for i, got := range all {
			sizes[i] = len(got)
		}
		t.Errorf("the long body did not arrive unchanged (%d bytes): the seller received bodies of %v bytes", len(plain), sizes)
	}
}
