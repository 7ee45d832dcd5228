package proxy

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/payguard/payguard/internal/testutil"
	"github.com/payguard/payguard/policy"
	"github.com/payguard/payguard/proxy/admin"
	"github.com/payguard/payguard/proxy/view"
	"github.com/payguard/payguard/receipts"
	"github.com/payguard/payguard/store"
	"github.com/payguard/payguard/store/memory"
	"github.com/payguard/payguard/x402"
)

// Amounts in atomic USDC units (6 decimals).
const (
	cent       = "10000"   // $0.01: allowed by default rules
	halfDollar = "500000"  // $0.50: above hold_above_usd 0.25, below max 1
	fiveDollar = "5000000" // $5: above max_per_payment_usd 1
)

// flows are the four ways a buyer meets a seller through the proxy.
var flows = []struct {
	name    string
	version int
	tls     bool
	network string
	asset   string
}{
	{"v2 plain HTTP", x402.V2, false, "eip155:84532", baseSepoliaUSDC},
	{"v2 MITM HTTPS", x402.V2, true, "eip155:84532", baseSepoliaUSDC},
	{"v1 plain HTTP", x402.V1, false, "base-sepolia", baseSepoliaUSDC},
	{"v1 MITM HTTPS", x402.V1, true, "base-sepolia", baseSepoliaUSDC},
}

func TestAllowNarrowsReleasesOnceAndCommits(t *testing.T) {
	for _, f := range flows {
		t.Run(f.name, func(t *testing.T) {
			// The seller offers a disallowed network first, then an allowed option; only the second may
			// reach the buyer.
			badNetwork := "eip155:1"
			if f.version == x402.V1 {
				badNetwork = "ethereum"
			}
			s := newSeller(t, f.version, f.tls,
				offer(f.version, badNetwork, "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48", sellerPayTo, "5000"),
				offer(f.version, f.network, f.asset, sellerPayTo, cent))
			h := newHarness(t, memory.New(), testRules(), trustUpstream(s))
			ex := h.buyer().pay(s.url("/weather?city=sf"), nil)

			if ex.first.StatusCode != http.StatusPaymentRequired {
				t.Fatalf("first response = %d %s, want the narrowed 402", ex.first.StatusCode, ex.firstBody)
			}
			if got := ex.first.Header.Get(HeaderDecision); got != "allow" {
				t.Errorf("%s = %q, want allow", HeaderDecision, got)
			}
			if r := ex.first.Header.Get(HeaderReceipt); r == "" || r == "forged-by-seller" {
				t.Errorf("%s = %q, want payguard's receipt id", HeaderReceipt, r)
			}
			if len(ex.challenge.Accepts) != 1 || ex.challenge.Accepts[0].Network != f.network || ex.challenge.Accepts[0].Amount != cent {
				t.Fatalf("buyer saw accepts %+v, want only the allowed option", ex.challenge.Accepts)
			}
			// The rewritten v1 body's length is right: Content-Length over plain HTTP; goproxy re-frames a
			// modified body as chunked inside a MITM'd connection (-1 here).
			if f.version == x402.V1 && ex.first.ContentLength != -1 && ex.first.ContentLength != int64(len(ex.firstBody)) {
				t.Errorf("v1 body Content-Length %d, body %d bytes", ex.first.ContentLength, len(ex.firstBody))
			}
			if ex.paid.StatusCode != http.StatusOK {
				t.Fatalf("paid retry = %d %s, want 200", ex.paid.StatusCode, ex.paidBody)
			}
			// The paid response names the decision that let the payment through: the receipt the narrowed
			// challenge carried (the ticket keeps it), never the seller's forgery.
			if got, want := ex.paid.Header.Get(HeaderReceipt), ex.first.Header.Get(HeaderReceipt); got != want {
				t.Errorf("paid %s = %q, want the allowing decision's receipt %q", HeaderReceipt, got, want)
			}
			if ex.paid.Header.Get(HeaderDecision) != "allow" || ex.paid.Header.Get(HeaderHold) != "" {
				t.Errorf("paid response decision headers = %v", ex.paid.Header)
			}
			if s.paid.Load() != 1 || s.settled.Load() != 10000 {
				t.Errorf("seller settled %d payments, %d units; want 1, 10000", s.paid.Load(), s.settled.Load())
			}
			// An allowed challenge goes on with its receipt id alone; no one receives a signature for it.
			if n := h.signs.Load(); n != 0 {
				t.Errorf("the proxy signed %d receipts for an allowed payment", n)
			}
			b := h.budgetState()
			if b.SpentMicros != 10000 || b.ReservedMicros != 0 {
				t.Errorf("budget spent %d reserved %d, want 10000 and 0 (settlement committed)", b.SpentMicros, b.ReservedMicros)
			}

			// The same payment again is a replay: refused at the proxy, the seller never sees it.
			seen := s.seen.Load()
			resp, body := h.buyer().get(s.url("/weather?city=sf"), http.Header{ex.header: {ex.payment}})
			r := decodeRefusal(t, resp, body)
			if r.Decision != "block" || !strings.Contains(strings.Join(r.Reasons, " "), "replay") {
				t.Errorf("replay refusal = %+v", r)
			}
			if s.seen.Load() != seen {
				t.Error("a replayed payment reached the seller")
			}
		})
	}
}

func TestBlockAnswers403(t *testing.T) {
	for _, f := range flows {
		t.Run(f.name, func(t *testing.T) {
			s := newSeller(t, f.version, f.tls, offer(f.version, f.network, f.asset, sellerPayTo, fiveDollar))
			h := newHarness(t, memory.New(), testRules(), trustUpstream(s))
			resp, body := h.buyer().get(s.url("/weather"), nil)
			r := decodeRefusal(t, resp, body)
			if r.Decision != "block" || r.Receipt == nil || r.Receipt.ID == "" {
				t.Fatalf("refusal = %s", body)
			}
			if !strings.Contains(strings.Join(r.Reasons, "\n"), "exceeds max") {
				t.Errorf("reasons %q do not name the per-payment maximum", r.Reasons)
			}
			if resp.Header.Get(HeaderDecision) != "block" || resp.Header.Get(HeaderReceipt) != r.Receipt.ID {
				t.Errorf("decision headers = %v", resp.Header)
			}
			// The refusal's receipt is signed by the proxy's key and says what the agent was told.
			jwks, _ := h.keys.PublicJWKS()
			_, claims, err := receipts.Verify(r.Receipt.JWS, jwks, receipts.VerifyOptions{})
			if err != nil || claims.ID != r.Receipt.ID || claims.Decision != "block" || claims.InputSHA256 == "" {
				t.Errorf("refusal receipt: %v, claims %+v", err, claims)
			}
			if resp.Header.Get(x402.HeaderPaymentRequired) != "" {
				t.Error("a blocked challenge still reached the buyer")
			}
			if b := h.budgetState(); b.ReservedMicros != 0 || b.SpentMicros != 0 {
				t.Errorf("a block reserved money: %+v", b)
			}
		})
	}
}

func TestHoldApprovedThroughAPIThenReleasedOnce(t *testing.T) {
	for _, f := range flows {
		t.Run(f.name, func(t *testing.T) {
			s := newSeller(t, f.version, f.tls, offer(f.version, f.network, f.asset, sellerPayTo, halfDollar))
			h := newHarness(t, memory.New(), testRules(), trustUpstream(s))
			b := h.buyer()

			// hold_wait 0: the agent gets 403 with the hold id at once.
			resp, body := b.get(s.url("/weather"), nil)
			r := decodeRefusal(t, resp, body)
			holdID := resp.Header.Get(HeaderHold)
			if r.Decision != "hold" || r.Hold == nil || r.Hold.ID != holdID || holdID == "" {
				t.Fatalf("hold refusal = %s (header %q)", body, holdID)
			}
			if resp.Header.Get("Retry-After") == "" {
				t.Error("no Retry-After on an unresolved hold")
			}
			pending := h.holds("pending")
			if len(pending) != 1 || pending[0].ID != holdID || pending[0].AmountMicros != 500000 {
				t.Fatalf("pending holds = %+v", pending)
			}
			// What the approver reads is the signed decision, unaltered.
			jwks, _ := h.keys.PublicJWKS()
			if err := receipts.VerifyResult(pending[0].Decision, jwks, receipts.VerifyOptions{}); err != nil {
				t.Errorf("the held decision does not verify: %v: %s", err, pending[0].Decision)
			}

			if code, out := h.api("POST", "/v1/holds/"+holdID+"/approve", testToken, map[string]string{"by": "alice", "note": "ok"}); code != 200 {
				t.Fatalf("approve: %d %s", code, out)
			}
			ex := b.pay(s.url("/weather"), nil)
			if ex.first.StatusCode != http.StatusPaymentRequired || ex.first.Header.Get(HeaderHold) != holdID {
				t.Fatalf("after approval: %d %v %s", ex.first.StatusCode, ex.first.Header, ex.firstBody)
			}
			if ex.paid.StatusCode != 200 || s.paid.Load() != 1 {
				t.Fatalf("paid retry after approval = %d, seller paid %d", ex.paid.StatusCode, s.paid.Load())
			}
			if got, want := ex.paid.Header.Get(HeaderReceipt), ex.first.Header.Get(HeaderReceipt); want == "" || got != want {
				t.Errorf("paid %s = %q, want the receipt %q of the challenge released by the approval", HeaderReceipt, got, want)
			}
			code, out := h.api("GET", "/v1/holds/"+holdID, testToken, nil)
			var used view.Hold
			if code != 200 || json.Unmarshal(out, &used) != nil || used.Status != "used" || used.ResolvedBy != "alice" ||
				used.Note != "ok" || used.ResolvedAt == nil {
				t.Errorf("hold after release: %d %s; want used, resolved by alice with the note", code, out)
			}

			// The approval is used once: the next 402 for the same request is held again.
			resp, body = b.get(s.url("/weather"), nil)
			r = decodeRefusal(t, resp, body)
			if r.Decision != "hold" || r.Hold.ID == holdID {
				t.Errorf("second request after a used approval = %s", body)
			}
		})
	}
}

func TestHoldResolvedWhileWaiting(t *testing.T) {
	for _, tc := range []struct {
		action, wantDecision string
		wantStatus           int
	}{
		{"approve", "allow", http.StatusPaymentRequired},
		{"deny", "block", http.StatusForbidden},
	} {
		t.Run(tc.action, func(t *testing.T) {
			s := newSeller(t, x402.V2, true, offer(x402.V2, "eip155:84532", baseSepoliaUSDC, sellerPayTo, halfDollar))
			h := newHarness(t, memory.New(), testRules(), trustUpstream(s), func(o *setup) { o.HoldWait = 10 * 60e9 })
			done := make(chan *http.Response, 1)
			go func() {
				resp, _ := h.buyer().get(s.url("/weather"), nil)
				done <- resp
			}()
			// Wait (by events, not by a clock) for the request to be parked on its hold.
			testutil.Eventually(t, 10*time.Second, func() bool {
				select {
				case resp := <-done:
					t.Fatalf("request finished before it was held: %d", resp.StatusCode)
				default:
				}
				return h.proxy.waiters.count() > 0
			}, "the request parked on its hold")
			id := h.holds("pending")[0].ID
			if code, out := h.api("POST", "/v1/holds/"+id+"/"+tc.action, testToken, map[string]string{"by": "bob"}); code != 200 {
				t.Fatalf("%s: %d %s", tc.action, code, out)
			}
			resp := <-done
			if resp.StatusCode != tc.wantStatus || resp.Header.Get(HeaderDecision) != tc.wantDecision || resp.Header.Get(HeaderHold) != id {
				t.Errorf("%s while waiting: %d %v", tc.action, resp.StatusCode, resp.Header)
			}
		})
	}
}

// Nobody answers within hold_wait: the agent gets 403 with the hold id and Retry-After, and the hold stays
// pending for a person to approve later.
func TestHoldWaitElapses(t *testing.T) {
	s := newSeller(t, x402.V2, true, offer(x402.V2, "eip155:84532", baseSepoliaUSDC, sellerPayTo, halfDollar))
	h := newHarness(t, memory.New(), testRules(), trustUpstream(s), func(o *setup) {
		o.HoldWait = 50 * time.Millisecond
		o.RetryAfter = 7 * time.Second
	})
	resp, body := h.buyer().get(s.url("/weather"), nil)
	r := decodeRefusal(t, resp, body)
	id := resp.Header.Get(HeaderHold)
	if r.Decision != "hold" || id == "" || r.Hold == nil || r.Hold.ID != id || r.Hold.Status != "pending" {
		t.Fatalf("unanswered hold: %s (hold header %q)", body, id)
	}
	if got := resp.Header.Get("Retry-After"); got != "7" {
		t.Errorf("Retry-After = %q, want 7", got)
	}
	if pending := h.holds("pending"); len(pending) != 1 || pending[0].ID != id {
		t.Errorf("pending holds = %+v, want %s", pending, id)
	}
	if s.seen.Load() != 0 {
		t.Error("a held payment reached the seller")
	}
}

func TestPaymentWithoutTicket(t *testing.T) {
	s := newSeller(t, x402.V2, false,
		offer(x402.V2, "eip155:84532", baseSepoliaUSDC, sellerPayTo, cent),
		offer(x402.V2, "eip155:84532", baseSepoliaUSDC, sellerPayTo, fiveDollar))
	h := newHarness(t, memory.New(), testRules())
	b := h.buyer()
	// The buyer pays from a challenge it got without payguard (read straight from the seller).
	direct := &buyer{t: t, client: http.DefaultClient}
	resp, body := direct.get(s.url("/weather"), nil)
	pr := direct.readChallenge(resp, body)

	hdr, val := b.sign(pr, 0, nil) // $0.01, within the rules: preflighted, reserved, forwarded
	resp, body = b.get(s.url("/weather"), http.Header{hdr: {val}})
	if resp.StatusCode != 200 || s.paid.Load() != 1 {
		t.Fatalf("allowed payment without a ticket = %d %s", resp.StatusCode, body)
	}
	if r := resp.Header.Get(HeaderReceipt); !strings.HasPrefix(r, "rcpt_") || resp.Header.Get(HeaderDecision) != "allow" {
		t.Errorf("payment allowed by its own preflight: decision headers %v, want allow and that preflight's receipt", resp.Header)
	}
	hdr, val = b.sign(pr, 1, nil) // $5: blocked, never leaves the proxy
	resp, body = b.get(s.url("/weather"), http.Header{hdr: {val}})
	if r := decodeRefusal(t, resp, body); r.Decision != "block" {
		t.Errorf("blocked payment without a ticket: %s", body)
	}
	if s.seen.Load() != 1 {
		t.Errorf("seller saw %d payments, want 1", s.seen.Load())
	}
	if b := h.budgetState(); b.SpentMicros != 10000 {
		t.Errorf("spent %d, want 10000", b.SpentMicros)
	}

	// A v1 payment names no asset: without a ticket it cannot be priced and is refused.
	v1 := newSeller(t, x402.V1, false, offer(x402.V1, "base-sepolia", baseSepoliaUSDC, sellerPayTo, cent))
	resp, body = direct.get(v1.url("/weather"), nil)
	hdr, val = b.sign(direct.readChallenge(resp, body), 0, nil)
	resp, body = b.get(v1.url("/weather"), http.Header{hdr: {val}})
	if r := decodeRefusal(t, resp, body); r.Decision == "allow" {
		t.Errorf("v1 payment without a ticket: %s", body)
	}
	if v1.seen.Load() != 0 {
		t.Error("an unpriced v1 payment reached the seller")
	}
}

func TestTamperedPaymentRefused(t *testing.T) {
	for name, tamper := range map[string]func(*x402.PaymentPayload, *x402.EIP3009Authorization){
		"authorization pays someone else": func(_ *x402.PaymentPayload, a *x402.EIP3009Authorization) { a.To = otherPayTo },
		"authorization pays more":         func(_ *x402.PaymentPayload, a *x402.EIP3009Authorization) { a.Value = "20000" },
		"accepted raised to $5 consistently": func(p *x402.PaymentPayload, a *x402.EIP3009Authorization) {
			acc := *p.Accepted
			acc.Amount, a.Value = fiveDollar, fiveDollar
			p.Accepted = &acc
		},
		"accepted names another asset": func(p *x402.PaymentPayload, _ *x402.EIP3009Authorization) {
			acc := *p.Accepted
			acc.Asset = baseUSDC
			p.Accepted = &acc
		},
		"accepted differs from the allowed option": func(p *x402.PaymentPayload, _ *x402.EIP3009Authorization) {
			acc := *p.Accepted
			acc.MaxTimeoutSeconds = 3600
			p.Accepted = &acc
		},
	} {
		t.Run(name, func(t *testing.T) {
			s := newSeller(t, x402.V2, true, offer(x402.V2, "eip155:84532", baseSepoliaUSDC, sellerPayTo, cent))
			h := newHarness(t, memory.New(), testRules(), trustUpstream(s))
			ex := h.buyer().pay(s.url("/weather"), tamper)
			r := decodeRefusal(t, ex.paid, ex.paidBody)
			if r.Decision == "allow" || s.seen.Load() != 0 {
				t.Errorf("tampered payment: refusal %+v, seller saw %d", r, s.seen.Load())
			}
		})
	}
	t.Run("v1 authorization pays someone else", func(t *testing.T) {
		s := newSeller(t, x402.V1, false, offer(x402.V1, "base-sepolia", baseSepoliaUSDC, sellerPayTo, cent))
		h := newHarness(t, memory.New(), testRules())
		ex := h.buyer().pay(s.url("/weather"), func(_ *x402.PaymentPayload, a *x402.EIP3009Authorization) { a.To = otherPayTo })
		if r := decodeRefusal(t, ex.paid, ex.paidBody); r.Decision == "allow" || s.seen.Load() != 0 {
			t.Errorf("tampered v1 payment: %+v, seller saw %d", r, s.seen.Load())
		}
	})
}

func TestUpstreamCannotForgeDecisionHeaders(t *testing.T) {
	for _, tlsOn := range []bool{false, true} {
		s := newSeller(t, x402.V2, tlsOn)
		h := newHarness(t, memory.New(), testRules(), trustUpstream(s))
		resp, body := h.buyer().get(s.url("/free"), nil)
		if resp.StatusCode != 200 || string(body) != `{"free":true}` {
			t.Fatalf("pass-through = %d %s", resp.StatusCode, body)
		}
		for k := range resp.Header {
			if strings.HasPrefix(strings.ToLower(k), "x-payguard-") {
				t.Errorf("tls=%v: upstream header %s reached the agent", tlsOn, k)
			}
		}
	}
}

func TestNonX402And402Edges(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/plain402", func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(402)
		w.Write([]byte("<html>pay us</html>"))
	})
	mux.HandleFunc("/big402", func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(402)
		w.Write([]byte(`{"x402Version":1,"error":"` + strings.Repeat("x", maxChallengeBody) + `","accepts":[]}`))
	})
	mux.HandleFunc("/bightml402", func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(402)
		w.Write([]byte(strings.Repeat("<p>pay</p>", maxChallengeBody)))
	})
	mux.HandleFunc("/badheader402", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set(x402.HeaderPaymentRequired, "not base64!")
		w.WriteHeader(402)
	})
	srv := newRawServer(t, mux)
	h := newHarness(t, memory.New(), testRules())
	b := h.buyer()

	resp, body := b.get(srv+"/plain402", nil)
	if resp.StatusCode != 402 || string(body) != "<html>pay us</html>" {
		t.Errorf("non-x402 402 changed: %d %q", resp.StatusCode, body)
	}
	resp, body = b.get(srv+"/bightml402", nil)
	if resp.StatusCode != 402 || len(body) != 10*maxChallengeBody {
		t.Errorf("large non-x402 402 changed: %d, %d bytes", resp.StatusCode, len(body))
	}
	for _, path := range []string{"/big402", "/badheader402"} {
		resp, body = b.get(srv+path, nil)
		if r := decodeRefusal(t, resp, body); r.Decision != "block" {
			t.Errorf("%s: undecodable x402 not refused: %s", path, body)
		}
	}
	if got := counterValue(t, h.proxy.metrics.nonX402); got != 2 {
		t.Errorf("non-x402 402s counted = %v, want 2", got)
	}
}

func TestAdminAuth(t *testing.T) {
	s := newSeller(t, x402.V2, false, offer(x402.V2, "eip155:84532", baseSepoliaUSDC, sellerPayTo, halfDollar))
	h := newHarness(t, memory.New(), testRules())
	resp, _ := h.buyer().get(s.url("/weather"), nil)
	id := resp.Header.Get(HeaderHold)
	for _, tok := range []string{"", "wrong", testToken + "x", strings.ToUpper(testToken)} {
		for _, call := range []struct{ method, path string }{
			{"GET", "/v1/holds"}, {"GET", "/v1/holds/" + id}, {"GET", "/v1/budget"},
			{"POST", "/v1/holds/" + id + "/approve"}, {"POST", "/v1/holds/" + id + "/deny"},
		} {
			if code, _ := h.api(call.method, call.path, tok, map[string]string{"by": "mallory"}); code != 401 {
				t.Errorf("%s %s with token %q = %d, want 401", call.method, call.path, tok, code)
			}
		}
	}
	if hs := h.holds("pending"); len(hs) != 1 || hs[0].ID != id {
		t.Errorf("unauthorized calls changed holds: %+v", hs)
	}
	for _, path := range []string{"/healthz", "/readyz", "/metrics"} {
		if code, _ := h.api("GET", path, "", nil); code != 200 {
			t.Errorf("%s = %d, want 200 without a token", path, code)
		}
	}
	if code, _ := h.api("POST", "/v1/holds/"+id+"/approve", testToken, map[string]string{"note": "no by"}); code != 400 {
		t.Errorf("approve without by = %d, want 400", code)
	}
	if code, _ := h.api("POST", "/v1/holds/nope/approve", testToken, map[string]string{"by": "a"}); code != 404 {
		t.Errorf("approve unknown hold = %d, want 404", code)
	}
	if code, _ := h.api("POST", "/v1/holds/"+id+"/deny", testToken, map[string]string{"by": "a"}); code != 200 {
		t.Errorf("deny = %d", code)
	}
	if code, _ := h.api("POST", "/v1/holds/"+id+"/approve", testToken, map[string]string{"by": "a"}); code != 409 {
		t.Errorf("approve after deny = %d, want 409", code)
	}
	// An empty configured token never authorizes anything.
	p := adminFor(h.proxy, admin.Options{})
	rec := newRecorder()
	req, _ := http.NewRequest("GET", "http://127.0.0.1/v1/budget", nil)
	req.Header.Set("Authorization", "Bearer ")
	p.ServeHTTP(rec, req)
	if rec.Code != 401 {
		t.Errorf("empty token configured: %d, want 401", rec.Code)
	}
}

// staleLedger reports an empty budget, as a replica sharing the store sees it when another replica reserved
// just after it read the ledger: the engine allows, and the ledger's atomic reservation is what refuses.
type staleLedger struct{ *memory.Store }

func (staleLedger) State(context.Context, string, string) (store.BudgetState, error) {
	return store.BudgetState{}, nil
}

func TestLedgerRefusalIsTheSignedDecision(t *testing.T) {
	s := newSeller(t, x402.V2, false, offer(x402.V2, "eip155:84532", baseSepoliaUSDC, sellerPayTo, cent))
	rules := testRules()
	rules.DailyCapUSD = policy.USD(1_000_000) // $1
	st := memory.New()
	if _, err := st.Reserve(context.Background(), "default", store.Day(time.Now()), 995_000, 1_000_000); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, staleLedger{st}, rules)
	resp, body := h.buyer().get(s.url("/weather"), nil)
	r := decodeRefusal(t, resp, body)
	if r.Decision != "block" || len(r.Reasons) != 1 || !strings.Contains(r.Reasons[0], "daily cap") {
		t.Fatalf("refusal = %s", body)
	}
	jwks, _ := h.keys.PublicJWKS()
	_, claims, err := receipts.Verify(r.Receipt.JWS, jwks, receipts.VerifyOptions{})
	if err != nil || claims.Decision != "block" || r.Receipt.Decision != "block" {
		t.Fatalf("the refusal's receipt says %q (signed %+v, %v); want the block the agent got", r.Receipt.Decision, claims, err)
	}
	if b, err := st.State(context.Background(), "default", store.Day(time.Now())); err != nil || b.Reserved != 995_000 || b.Spent != 0 {
		t.Errorf("budget after the refusal: %+v %v, want only the earlier reservation", b, err)
	}
}
