package proxy

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/payguard/payguard/store"
	"github.com/payguard/payguard/store/memory"
	"github.com/payguard/payguard/x402"
)

const uptoFacilitator = "0x3333333333333333333333333333333333333333"

// uptoOffer is an upto option as @x402/express 2.27 sends it: the maximum in `amount`, Permit2 and the
// facilitator's address in extra (specs/schemes/upto/scheme_upto_evm.md).
func uptoOffer(amount string) x402.Requirement {
	return x402.Requirement{Version: x402.V2, Scheme: "upto", Network: "eip155:84532", Amount: amount,
		Asset: baseSepoliaUSDC, PayTo: sellerPayTo, MaxTimeoutSeconds: 300,
		Extra: json.RawMessage(`{"name":"USDC","version":"2","assetTransferMethod":"permit2","facilitatorAddress":"` + uptoFacilitator + `"}`)}
}

// uptoSeller is a v2 seller with one upto route: it settles `usage` atomic units (or whatever settle
// writes into the settlement it reports) for each payment it receives, checking nothing: what reaches it
// is what payguard let through.
type uptoSeller struct {
	offer  x402.Requirement
	srv    *httptest.Server
	usage  string
	settle func(*x402.SettleResponse) // a lying seller's edit of the settlement it reports
	seen   atomic.Int64
}

func newUptoSeller(t *testing.T, offer x402.Requirement, usage string) *uptoSeller {
	s := &uptoSeller{offer: offer, usage: usage}
	s.srv = httptest.NewServer(s)
	t.Cleanup(s.srv.Close)
	return s
}

func (s *uptoSeller) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	value := r.Header.Get(x402.HeaderPaymentSignature)
	if value == "" {
		pr := &x402.PaymentRequired{X402Version: 2, Error: "Payment required", Accepts: []x402.Requirement{s.offer},
			Resource: &x402.ResourceInfo{URL: "http://" + r.Host + r.URL.RequestURI()}}
		h, _ := x402.EncodeHeaderJSON(pr)
		w.Header().Set(x402.HeaderPaymentRequired, h)
		w.WriteHeader(http.StatusPaymentRequired)
		fmt.Fprint(w, "{}")
		return
	}
	s.seen.Add(1)
	pl, _ := x402.DecodePaymentPayloadHeader(value)
	payer := ""
	if ev, err := pl.EVM(); err == nil && ev.Permit2 != nil {
		payer = ev.Permit2.From
	}
	settle := x402.SettleResponse{Success: true, Payer: payer, Transaction: "0x" + strings.Repeat("ab", 32),
		Network: s.offer.Network, Amount: s.usage}
	if s.settle != nil {
		s.settle(&settle)
	}
	h, _ := x402.EncodeHeaderJSON(settle)
	w.Header().Set(x402.HeaderPaymentResponse, h)
	fmt.Fprint(w, `{"tokens":42}`)
}

// signUpto builds the payment the SDK's upto client sends for option opt (placeholder signature: payguard
// binds the signed message's fields; the facilitator checks the signature). edit may change the message.
func signUpto(t *testing.T, pr *x402.PaymentRequired, edit func(pl *x402.PaymentPayload, a map[string]any)) string {
	t.Helper()
	opt := pr.Accepts[0]
	var nonce [32]byte
	rand.Read(nonce[:])
	a := map[string]any{
		"from":      buyerAddress,
		"permitted": map[string]any{"token": opt.Asset, "amount": opt.Amount},
		"spender":   x402.UptoPermit2ProxyAddress,
		"nonce":     new(big.Int).SetBytes(nonce[:]).String(),
		"deadline":  strconv.FormatInt(time.Now().Unix()+opt.MaxTimeoutSeconds, 10),
		"witness":   map[string]any{"to": opt.PayTo, "facilitator": facilitatorOf(&opt), "validAfter": "0"},
	}
	pl := &x402.PaymentPayload{X402Version: 2, Resource: pr.Resource, Accepted: &opt}
	if edit != nil {
		edit(pl, a)
	}
	raw, _ := json.Marshal(map[string]any{"signature": "0x" + hex.EncodeToString(make([]byte, 65)), "permit2Authorization": a})
	pl.Payload = raw
	v, err := x402.EncodeHeaderJSON(pl)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// uptoExchange asks for url through the proxy and pays the narrowed challenge with an upto payment.
func uptoExchange(t *testing.T, b *buyer, url string, edit func(*x402.PaymentPayload, map[string]any)) (*http.Response, []byte) {
	t.Helper()
	resp, body := b.get(url, nil)
	if resp.StatusCode != http.StatusPaymentRequired {
		return resp, body
	}
	pr := b.readChallenge(resp, body)
	return b.get(url, http.Header{x402.HeaderPaymentSignature: {signUpto(t, pr, edit)}})
}

// Under the cap the upto payment goes through; the seller's settled usage is the spend and the rest of the
// reserved maximum is released; the agent is told the scheme, the maximum and the settled amount.
func TestUptoSpendIsTheSettledAmount(t *testing.T) {
	for _, usage := range []string{"70000", "0", "200000"} {
		t.Run(usage, func(t *testing.T) {
			s := newUptoSeller(t, uptoOffer("200000"), usage)
			h := newHarness(t, memory.New(), testRules())
			resp, body := uptoExchange(t, h.buyer(), s.srv.URL+"/generate", nil)
			if resp.StatusCode != 200 || s.seen.Load() != 1 {
				t.Fatalf("paid response %d %s (seller saw %d payments)", resp.StatusCode, body, s.seen.Load())
			}
			want, _ := strconv.ParseInt(usage, 10, 64)
			if b := h.budgetState(); b.SpentMicros != want || b.ReservedMicros != 0 {
				t.Fatalf("budget spent %d reserved %d, want spent %d reserved 0", b.SpentMicros, b.ReservedMicros, want)
			}
			for k, v := range map[string]string{HeaderScheme: "upto", HeaderAuthorized: "200000", HeaderSettled: usage, HeaderDecision: "allow"} {
				if got := resp.Header.Get(k); got != v {
					t.Errorf("%s = %q, want %q", k, got, v)
				}
			}
		})
	}
}

// A maximum over the per-payment cap is refused at the 402: the agent never sees terms to sign, and no
// payment reaches the seller.
func TestUptoMaximumOverCapRefusedBeforeSigning(t *testing.T) {
	s := newUptoSeller(t, uptoOffer("5000000"), "10")
	h := newHarness(t, memory.New(), testRules())
	resp, body := h.buyer().get(s.srv.URL+"/generate", nil)
	r := decodeRefusal(t, resp, body)
	if r.Decision != "block" || len(r.Reasons) != 1 || r.Reasons[0] != "block: upto maximum $5 exceeds max $1" {
		t.Fatalf("refusal %+v", r)
	}
	if resp.Header.Get(x402.HeaderPaymentRequired) != "" || s.seen.Load() != 0 {
		t.Fatal("the challenge reached the agent or a payment reached the seller")
	}
	if b := h.budgetState(); b.SpentMicros != 0 || b.ReservedMicros != 0 {
		t.Fatalf("budget %+v", b)
	}
}

// The ticket binds the Permit2 authorization exactly as the scheme defines it: every departure is refused
// before the seller, and the payment never leaves the proxy.
func TestUptoTicketBindsThePermit2Authorization(t *testing.T) {
	now := time.Now().Unix()
	cases := map[string]func(pl *x402.PaymentPayload, a map[string]any){
		"other spender": func(_ *x402.PaymentPayload, a map[string]any) { a["spender"] = x402.ExactPermit2ProxyAddress },
		"other witness recipient": func(_ *x402.PaymentPayload, a map[string]any) {
			a["witness"].(map[string]any)["to"] = otherPayTo
		},
		"other facilitator": func(_ *x402.PaymentPayload, a map[string]any) {
			a["witness"].(map[string]any)["facilitator"] = otherPayTo
		},
		"no facilitator": func(_ *x402.PaymentPayload, a map[string]any) {
			delete(a["witness"].(map[string]any), "facilitator")
		},
		"larger permitted maximum": func(_ *x402.PaymentPayload, a map[string]any) {
			a["permitted"].(map[string]any)["amount"] = "200001"
		},
		"larger maximum in accepted and permit": func(pl *x402.PaymentPayload, a map[string]any) {
			acc := *pl.Accepted
			acc.Amount = "900000"
			pl.Accepted = &acc
			a["permitted"].(map[string]any)["amount"] = "900000"
		},
		"other token": func(_ *x402.PaymentPayload, a map[string]any) {
			a["permitted"].(map[string]any)["token"] = baseUSDC
		},
		"deadline past": func(_ *x402.PaymentPayload, a map[string]any) { a["deadline"] = strconv.FormatInt(now-1, 10) },
		"deadline beyond maxTimeoutSeconds": func(_ *x402.PaymentPayload, a map[string]any) {
			a["deadline"] = strconv.FormatInt(now+300+3600, 10)
		},
		"window not open yet": func(_ *x402.PaymentPayload, a map[string]any) {
			a["witness"].(map[string]any)["validAfter"] = strconv.FormatInt(now+3600, 10)
		},
		"numeric deadline": func(_ *x402.PaymentPayload, a map[string]any) { a["deadline"] = now + 60 },
		"eip3009 instead of permit2": func(_ *x402.PaymentPayload, a map[string]any) {
			for k := range a {
				delete(a, k)
			}
			a["from"] = buyerAddress // not a Permit2 message at all: the payload below renames it
		},
		"other facilitator in accepted too": func(pl *x402.PaymentPayload, a map[string]any) {
			acc := *pl.Accepted
			acc.Extra = json.RawMessage(`{"name":"USDC","version":"2","assetTransferMethod":"permit2","facilitatorAddress":"` + otherPayTo + `"}`)
			pl.Accepted = &acc
			a["witness"].(map[string]any)["facilitator"] = otherPayTo
		},
	}
	for name, edit := range cases {
		t.Run(name, func(t *testing.T) {
			s := newUptoSeller(t, uptoOffer("200000"), "1000")
			h := newHarness(t, memory.New(), testRules())
			b := h.buyer()
			url := s.srv.URL + "/generate"
			resp, body := b.get(url, nil)
			pr := b.readChallenge(resp, body)
			value := signUpto(t, pr, edit)
			if name == "eip3009 instead of permit2" {
				value = eip3009Upto(t, pr)
			}
			resp, body = b.get(url, http.Header{x402.HeaderPaymentSignature: {value}})
			r := decodeRefusal(t, resp, body)
			if r.Decision == "allow" || s.seen.Load() != 0 {
				t.Fatalf("refusal %+v; seller saw %d payments", r, s.seen.Load())
			}
			if b := h.budgetState(); b.SpentMicros != 0 {
				t.Fatalf("budget %+v", b)
			}
		})
	}
}

// eip3009Upto is an upto payment that carries an EIP-3009 authorization, which the scheme does not have.
func eip3009Upto(t *testing.T, pr *x402.PaymentRequired) string {
	opt := pr.Accepts[0]
	pl := &x402.PaymentPayload{X402Version: 2, Resource: pr.Resource, Accepted: &opt}
	pl.Payload, _ = json.Marshal(map[string]any{"signature": "0x00", "authorization": x402.EIP3009Authorization{
		From: buyerAddress, To: opt.PayTo, Value: opt.Amount, ValidAfter: "0", ValidBefore: "9999999999", Nonce: "0x01"}})
	v, _ := x402.EncodeHeaderJSON(pl)
	return v
}

// An upto authorization is single use: the same nonce again, in another spelling (hex instead of decimal)
// and on another payment, is a replay.
func TestUptoNonceIsSingleUse(t *testing.T) {
	s := newUptoSeller(t, uptoOffer("200000"), "1000")
	h := newHarness(t, memory.New(), testRules())
	b := h.buyer()
	url := s.srv.URL + "/generate"
	nonce := new(big.Int).Lsh(big.NewInt(7), 200)
	resp, _ := uptoExchange(t, b, url, func(_ *x402.PaymentPayload, a map[string]any) { a["nonce"] = nonce.String() })
	if resp.StatusCode != 200 {
		t.Fatalf("first payment %d", resp.StatusCode)
	}
	resp, body := uptoExchange(t, b, url, func(_ *x402.PaymentPayload, a map[string]any) { a["nonce"] = "0x" + nonce.Text(16) })
	if r := decodeRefusal(t, resp, body); r.ReasonClass != "payment_replay" || s.seen.Load() != 1 {
		t.Fatalf("replay: %+v, seller saw %d", r, s.seen.Load())
	}
}

// A seller that reports a settlement its authorization does not allow raises an alarm: the whole maximum
// counts, the alarm is logged and counted, and that seller's next payment waits for a person.
func TestUptoSettlementOutsideTheAuthorizationAlarms(t *testing.T) {
	cases := map[string]func(*x402.SettleResponse){
		"above the maximum": func(s *x402.SettleResponse) { s.Amount = "200001" },
		"unreadable amount": func(s *x402.SettleResponse) { s.Amount = "1e9" },
		"another network":   func(s *x402.SettleResponse) { s.Network = "eip155:8453" },
		"another payer":     func(s *x402.SettleResponse) { s.Payer = otherPayTo },
		"another recipient": func(s *x402.SettleResponse) {
			s.Unknown = map[string]json.RawMessage{"payTo": json.RawMessage(`"` + otherPayTo + `"`)}
		},
		"recipient in extra": func(s *x402.SettleResponse) {
			s.Unknown = map[string]json.RawMessage{"extra": json.RawMessage(`{"to":"` + otherPayTo + `"}`)}
		},
	}
	for name, lie := range cases {
		t.Run(name, func(t *testing.T) {
			s := newUptoSeller(t, uptoOffer("200000"), "1000")
			s.settle = lie
			h := newHarness(t, memory.New(), testRules())
			b := h.buyer()
			resp, body := uptoExchange(t, b, s.srv.URL+"/generate", nil)
			if resp.StatusCode != 200 {
				t.Fatalf("paid response %d %s", resp.StatusCode, body)
			}
			if got := resp.Header.Get(HeaderSettled); got != "" {
				t.Errorf("a settlement outside the authorization was passed on as settled %q", got)
			}
			if st := h.budgetState(); st.SpentMicros != 200000 || st.ReservedMicros != 0 {
				t.Fatalf("budget spent %d reserved %d, want the whole maximum spent", st.SpentMicros, st.ReservedMicros)
			}
			_, metrics := h.api("GET", "/metrics", "", nil)
			if !strings.Contains(string(metrics), `payguard_settlement_alarms_total{scheme="upto"} 1`) ||
				!strings.Contains(string(metrics), `payguard_settlements_total{result="alarm",scheme="upto"} 1`) {
				t.Error("alarm not counted")
			}
			// The seller's next payment is held for a person, with the alarm as its reason.
			resp, body = b.get(s.srv.URL+"/generate", nil)
			r := decodeRefusal(t, resp, body)
			if r.Decision != "hold" || len(r.Reasons) != 1 || !strings.Contains(r.Reasons[0], "reported a settlement outside its authorization") ||
				r.ReasonClass != "hold_pending" {
				t.Fatalf("next payment: %+v", r)
			}
			if len(h.holds("pending")) != 1 {
				t.Fatal("no pending hold for the seller under alarm")
			}
			// An operator clears the alarm: payments flow again.
			host := strings.Split(strings.TrimPrefix(s.srv.URL, "http://"), ":")[0]
			if code, out := h.api("DELETE", "/v1/alarms/"+host, testToken, nil); code != 200 {
				t.Fatalf("clear alarm: %d %s", code, out)
			}
			s.settle = nil
			if resp, _ := uptoExchange(t, b, s.srv.URL+"/generate", nil); resp.StatusCode != 200 {
				t.Fatalf("after clearing: %d", resp.StatusCode)
			}
		})
	}
}

// A settlement that names no amount is not trusted as zero: the whole maximum counts.
func TestUptoSettlementWithoutAmountSpendsTheMaximum(t *testing.T) {
	s := newUptoSeller(t, uptoOffer("200000"), "")
	h := newHarness(t, memory.New(), testRules())
	if resp, _ := uptoExchange(t, h.buyer(), s.srv.URL+"/generate", nil); resp.StatusCode != 200 {
		t.Fatalf("paid %d", resp.StatusCode)
	}
	if st := h.budgetState(); st.SpentMicros != 200000 {
		t.Fatalf("spent %d, want the maximum", st.SpentMicros)
	}
}

// The alarm lives in the store: a replica that never saw the lying settlement holds the seller too, and so
// does a proxy restarted on the same store.
func TestUptoAlarmIsSharedThroughTheStore(t *testing.T) {
	s := newUptoSeller(t, uptoOffer("200000"), "1000")
	s.settle = func(r *x402.SettleResponse) { r.Amount = "999999" }
	st := memory.New()
	a := newHarness(t, st, testRules())
	if resp, _ := uptoExchange(t, a.buyer(), s.srv.URL+"/generate", nil); resp.StatusCode != 200 {
		t.Fatalf("paid %d", resp.StatusCode)
	}
	b := newHarness(t, st, testRules()) // another replica of the fleet
	resp, body := b.buyer().get(s.srv.URL+"/generate", nil)
	if r := decodeRefusal(t, resp, body); r.Decision != "hold" || r.ReasonClass != "hold_pending" {
		t.Fatalf("the other replica: %+v", r)
	}
}

// alarmsDown is a store whose alarms cannot be read.
type alarmsDown struct{ *memory.Store }

func (alarmsDown) Alarm(context.Context, string, time.Time) (store.Alarm, error) {
	return store.Alarm{}, errors.New("alarm store down")
}

// Alarms that cannot be read never let a payment through: the decision holds and says why.
func TestUptoUnreadableAlarmsHold(t *testing.T) {
	s := newUptoSeller(t, uptoOffer("200000"), "1000")
	h := newHarness(t, alarmsDown{memory.New()}, testRules())
	resp, body := h.buyer().get(s.srv.URL+"/generate", nil)
	r := decodeRefusal(t, resp, body)
	if r.Decision != "hold" || len(r.Reasons) != 1 || !strings.Contains(r.Reasons[0], "settlement alarms unavailable") {
		t.Fatalf("%+v", r)
	}
}

// batch-settlement and auth-capture move money after the request, where the proxy cannot see it: an option
// in either is refused with a reason naming the scheme, and a challenge that also offers exact is narrowed
// to the exact option.
func TestLaterSettlingSchemesAreRefused(t *testing.T) {
	for _, scheme := range []string{"batch-settlement", "auth-capture"} {
		t.Run(scheme, func(t *testing.T) {
			later := offer(x402.V2, "eip155:84532", baseSepoliaUSDC, sellerPayTo, cent)
			later.Scheme = scheme
			s := newSeller(t, x402.V2, false, later)
			h := newHarness(t, memory.New(), testRules())
			resp, body := h.buyer().get(s.url("/r"), nil)
			r := decodeRefusal(t, resp, body)
			if r.Decision != "block" || r.ReasonClass != "scheme_unsupported" || len(r.Reasons) != 1 ||
				!strings.HasPrefix(r.Reasons[0], "block: payment scheme "+scheme+" is not supported: ") {
				t.Fatalf("%+v", r)
			}
			both := newSeller(t, x402.V2, false, later, offer(x402.V2, "eip155:84532", baseSepoliaUSDC, sellerPayTo, cent))
			b := h.buyer()
			resp, body = b.get(both.url("/r"), nil)
			if pr := b.readChallenge(resp, body); len(pr.Accepts) != 1 || pr.Accepts[0].Scheme != "exact" {
				t.Fatalf("narrowed to %+v", pr.Accepts)
			}
		})
	}
}
