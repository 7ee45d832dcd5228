package proxy

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/payguard/payguard/preflight"
	"github.com/payguard/payguard/store/memory"
	"github.com/payguard/payguard/x402"
)

// A settlement alarm holds the seller, not one spelling of its host: after a lying upto settlement at
// 127.0.0.1, the same server reached as [::ffff:127.0.0.1] (an IPv4-mapped IPv6 address, dialled as the
// same IPv4 address) is held too. Before alarms were keyed by the seller's site (alarmSite), that spelling
// was allowed and paid.
func TestAttackAlarmOtherHostSpelling(t *testing.T) {
	s := newUptoSeller(t, uptoOffer("200000"), "1000")
	s.settle = func(r *x402.SettleResponse) { r.Amount = "999999" }
	h := newHarness(t, memory.New(), testRules())
	b := h.buyer()
	if resp, body := uptoExchange(t, b, s.srv.URL+"/generate", nil); resp.StatusCode != 200 {
		t.Fatalf("paid response %d %s", resp.StatusCode, body)
	}
	port := s.srv.URL[strings.LastIndex(s.srv.URL, ":")+1:]
	s.settle = nil
	for _, base := range []string{"http://[::ffff:127.0.0.1]:" + port, "http://[::ffff:7f00:1]:" + port} {
		resp, body := b.get(base+"/generate", nil)
		if resp.StatusCode == http.StatusPaymentRequired {
			t.Fatalf("%s: the seller under alarm was offered for payment again (402 passed on)", base)
		}
		if r := decodeRefusal(t, resp, body); r.Decision != "hold" || !strings.Contains(strings.Join(r.Reasons, " "), "settlement outside its authorization") {
			t.Fatalf("%s: %+v", base, r)
		}
	}
	// The operator clears the alarm under any spelling of the host.
	if code, out := h.api("DELETE", "/v1/alarms/[::ffff:127.0.0.1]", testToken, nil); code != 200 {
		t.Fatalf("clear alarm: %d %s", code, out)
	}
	if resp, body := uptoExchange(t, b, s.srv.URL+"/generate", nil); resp.StatusCode != 200 {
		t.Fatalf("after clearing: %d %s", resp.StatusCode, body)
	}
}

// A seller controls every name under its registrable domain (a wildcard DNS record costs nothing), and a
// whole IPv6 /64: an alarm raised at one name holds every other name of the site.
func TestAttackAlarmOtherNameOfTheSite(t *testing.T) {
	h := newHarness(t, memory.New(), testRules())
	p := h.proxy
	ctx := context.Background()
	for _, c := range []struct{ raised, next string }{
		{"https://api.seller.example/generate", "https://other.seller.example/generate"},
		{"https://seller.example/generate", "https://WWW.Seller.Example./x"},
		{"https://[2001:db8::1]/generate", "https://[2001:db8::ffff:1]/generate"},
	} {
		p.raiseSellerAlarm(ctx, alarmSite(c.raised), "settled above the maximum")
		res := &preflight.Result{Decision: allow, Receipt: preflight.Receipt{Decision: allow}}
		p.holdForAlarm(ctx, res, targetOf(c.next).alarmSite, nil)
		if res.Decision != hold {
			t.Errorf("alarm at %s: %s decided %s", c.raised, c.next, res.Decision)
		}
	}
	// Another site stays unaffected.
	res := &preflight.Result{Decision: allow, Receipt: preflight.Receipt{Decision: allow}}
	p.holdForAlarm(ctx, res, targetOf("https://seller-other.example/generate").alarmSite, nil)
	if res.Decision != allow {
		t.Errorf("another site held: %v", res.Reasons)
	}
}

// rawSettleSeller is an upto seller whose settlement header is the raw JSON settle writes (a lie the
// SettleResponse type cannot even express: a numeric amount, a string success).
type rawSettleSeller struct {
	*uptoSeller
	raw string
}

func (s *rawSettleSeller) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get(x402.HeaderPaymentSignature) == "" {
		s.uptoSeller.ServeHTTP(w, r)
		return
	}
	s.seen.Add(1)
	w.Header().Set(x402.HeaderPaymentResponse, base64.StdEncoding.EncodeToString([]byte(s.raw)))
	fmt.Fprint(w, `{"tokens":42}`)
}

// An upto seller that reports a successful settlement payguard cannot read (the amount as a JSON number
// above the maximum, which a JavaScript client would read as 999999; a success that is not a boolean) is
// outside its authorization as far as anyone can tell: the whole maximum is spent and the seller is under
// alarm. Before, such a settlement was counted "unreadable": no alarm, and the seller's next payment was
// allowed.
func TestAttackUptoUnreadableSettlementAlarms(t *testing.T) {
	for name, raw := range map[string]string{
		"numeric amount above the maximum": `{"success":true,"network":"eip155:84532","transaction":"0xab","amount":999999}`,
		"success as a string":              `{"success":"true","network":"eip155:84532","amount":"999999"}`,
		"not JSON":                         `amount=999999`,
	} {
		t.Run(name, func(t *testing.T) {
			u := newUptoSeller(t, uptoOffer("200000"), "1000")
			s := &rawSettleSeller{uptoSeller: u, raw: raw}
			u.srv.Config.Handler = s
			h := newHarness(t, memory.New(), testRules())
			b := h.buyer()
			if resp, body := uptoExchange(t, b, u.srv.URL+"/generate", nil); resp.StatusCode != 200 {
				t.Fatalf("paid response %d %s", resp.StatusCode, body)
			}
			if st := h.budgetState(); st.SpentMicros != 200000 || st.ReservedMicros != 0 {
				t.Fatalf("budget spent %d reserved %d, want the whole maximum spent", st.SpentMicros, st.ReservedMicros)
			}
			resp, body := b.get(u.srv.URL+"/generate", nil)
			if r := decodeRefusal(t, resp, body); r.Decision != "hold" || !strings.Contains(strings.Join(r.Reasons, " "), "settlement outside its authorization") {
				t.Fatalf("next payment: %+v", r)
			}
		})
	}
}

// The same lie over MCP: result._meta["x402/payment-response"] with the amount as a JSON number above the
// maximum is an alarm and spends the maximum (commitSettlement is the one reading of a settlement).
func TestAttackMCPUptoUnreadableSettlementAlarms(t *testing.T) {
	s := newMCPSeller(t, "both", false, uptoOffer("200000"))
	s.usage, s.uptoClaimValue = "1000", 999999
	h := newHarness(t, memory.New(), testRules())
	b := h.mcpBuyer(s.url())
	_, first := b.call(nil)
	b.call(map[string]any{"x402/payment": uptoMCP(t, termsOf(t, first))})
	if st := h.budgetState(); st.SpentMicros != 200000 || st.ReservedMicros != 0 {
		t.Fatalf("spent %d reserved %d, want the whole maximum spent", st.SpentMicros, st.ReservedMicros)
	}
	_, next := b.call(nil)
	if !strings.Contains(allTerms(next), "reported a settlement outside its authorization") || termsOf(t, next) != nil {
		t.Fatalf("next call: %s", allTerms(next))
	}
}

// An alarm holds a payment whose ticket was minted before it: an agent that asked twice (two 402s, two
// tickets) and paid the first to a seller that then lied about its settlement does not pay the second
// without a person. Before, the second payment was released on its ticket.
func TestAttackAlarmStopsAnEarlierTicket(t *testing.T) {
	s := newUptoSeller(t, uptoOffer("200000"), "1000")
	s.settle = func(r *x402.SettleResponse) { r.Amount = "999999" }
	h := newHarness(t, memory.New(), testRules())
	b := h.buyer()
	url := s.srv.URL + "/generate"
	var values []string
	for range 2 {
		resp, body := b.get(url, nil)
		values = append(values, signUpto(t, b.readChallenge(resp, body), nil))
	}
	if resp, body := b.get(url, http.Header{x402.HeaderPaymentSignature: {values[0]}}); resp.StatusCode != 200 {
		t.Fatalf("first payment %d %s", resp.StatusCode, body)
	}
	resp, body := b.get(url, http.Header{x402.HeaderPaymentSignature: {values[1]}})
	if resp.StatusCode == 200 || s.seen.Load() != 1 {
		t.Fatalf("the second payment reached the seller under alarm: %d %s (seller saw %d)", resp.StatusCode, body, s.seen.Load())
	}
	if r := decodeRefusal(t, resp, body); r.Decision != "hold" || !strings.Contains(strings.Join(r.Reasons, " "), "settlement outside its authorization") {
		t.Fatalf("second payment: %+v", r)
	}
	if st := h.budgetState(); st.SpentMicros != 200000 || st.ReservedMicros != 0 {
		t.Fatalf("spent %d reserved %d: the refused payment's reservation must be released", st.SpentMicros, st.ReservedMicros)
	}
}
