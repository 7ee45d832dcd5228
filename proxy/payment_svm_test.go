package proxy

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/payguard/payguard/policy"
	"github.com/payguard/payguard/screening/sanctions"
	"github.com/payguard/payguard/store/memory"
	"github.com/payguard/payguard/x402"
	"github.com/payguard/payguard/x402/svm"
	"github.com/payguard/payguard/x402/svm/svmtest"
)

// svmSeller offers one Solana option (an official payment's requirement) and, on a paid retry, checks the
// transaction against its own requirement as a facilitator does before it co-signs; it counts what reaches it.
type svmSeller struct {
	offer      x402.Requirement
	v1         bool // a v1 seller: the challenge in the body, the payment in X-PAYMENT
	srv        *httptest.Server
	seen, paid atomic.Int64
}

// newSVMSellerV1 is newSVMSeller speaking x402 v1 (network "solana-devnet", maxAmountRequired).
func newSVMSellerV1(t *testing.T, c svmtest.Case) *svmSeller {
	s := newSVMSeller(t, c)
	s.v1 = true
	s.offer.Version, s.offer.Network = x402.V1, "solana-devnet"
	return s
}

func newSVMSeller(t *testing.T, c svmtest.Case) *svmSeller {
	t.Helper()
	var req x402.Requirement
	if err := json.Unmarshal(c.Requirement, &req); err != nil {
		t.Fatal(err)
	}
	req.Version = x402.V2
	s := &svmSeller{offer: req}
	s.srv = httptest.NewServer(s)
	t.Cleanup(s.srv.Close)
	return s
}

func (s *svmSeller) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s.v1 {
		s.serveV1(w, r)
		return
	}
	value := r.Header.Get(x402.HeaderPaymentSignature)
	if value == "" {
		pr := &x402.PaymentRequired{X402Version: x402.V2, Accepts: []x402.Requirement{s.offer},
			Resource: &x402.ResourceInfo{URL: "http://" + r.Host + r.URL.RequestURI()}}
		h, _ := x402.EncodeHeaderJSON(pr)
		w.Header().Set(x402.HeaderPaymentRequired, h)
		w.WriteHeader(http.StatusPaymentRequired)
		fmt.Fprint(w, "{}")
		return
	}
	s.seen.Add(1)
	pl, err := x402.DecodePaymentPayloadHeader(value)
	if err != nil || pl.Accepted == nil || !pl.Accepted.Equal(s.offer) {
		http.Error(w, "no matching requirement", http.StatusPaymentRequired)
		return
	}
	text, _ := pl.ExactSVM()
	raw, _ := base64.StdEncoding.DecodeString(text)
	tx, err := svm.Decode(raw)
	if err == nil {
		_, err = svm.CheckExact(tx, s.terms())
	}
	if err != nil {
		http.Error(w, "verify: "+err.Error(), http.StatusPaymentRequired)
		return
	}
	s.paid.Add(1)
	h, _ := x402.EncodeHeaderJSON(x402.SettleResponse{Success: true, Transaction: "5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnbJLgp8uirBgmQpjKhoR4tjF3ZpRzrFmBV6UjKdiSZkQUW", Network: s.offer.Network})
	w.Header().Set(x402.HeaderPaymentResponse, h)
	fmt.Fprint(w, `{"ok":true}`)
}

func (s *svmSeller) serveV1(w http.ResponseWriter, r *http.Request) {
	value := r.Header.Get(x402.HeaderXPayment)
	if value == "" {
		o := s.offer
		o.Resource = "http://" + r.Host + r.URL.Path
		b, _ := json.Marshal(&x402.PaymentRequired{X402Version: x402.V1, Error: "X-PAYMENT header is required", Accepts: []x402.Requirement{o}})
		w.WriteHeader(http.StatusPaymentRequired)
		w.Write(b)
		return
	}
	s.seen.Add(1)
	pl, err := x402.DecodePaymentPayloadHeader(value)
	if err != nil || pl.Network != s.offer.Network {
		http.Error(w, "no matching requirement", http.StatusPaymentRequired)
		return
	}
	text, _ := pl.ExactSVM()
	raw, _ := base64.StdEncoding.DecodeString(text)
	tx, err := svm.Decode(raw)
	if err == nil {
		_, err = svm.CheckExact(tx, s.terms())
	}
	if err != nil {
		http.Error(w, "verify: "+err.Error(), http.StatusPaymentRequired)
		return
	}
	s.paid.Add(1)
	h, _ := x402.EncodeHeaderJSON(x402.SettleResponse{Success: true, Transaction: "5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnbJLgp8uirBgmQpjKhoR4tjF3ZpRzrFmBV6UjKdiSZkQUW", Network: s.offer.Network, Payer: "B6bm4fobtZD4GTqSVGotmmVVzt7RBsP6j9Dyiwd8er3f"})
	w.Header().Set(x402.HeaderXPaymentResponse, h)
	fmt.Fprint(w, `{"ok":true}`)
}

// svmPaymentV1 is the v1 payment header (X-PAYMENT) for a transaction.
func svmPaymentV1(raw []byte) http.Header {
	pl := fmt.Sprintf(`{"x402Version":1,"scheme":"exact","network":"solana-devnet","payload":{"transaction":%q}}`,
		base64.StdEncoding.EncodeToString(raw))
	return http.Header{x402.HeaderXPayment: {base64.StdEncoding.EncodeToString([]byte(pl))}}
}

// A v1 Solana payment names neither payee nor asset: it is found at its ticket by the mint and amount its
// transfer moves, and bound there to the whole approved option. The approved payment goes through once; one
// that pays another token account or another fee payer is refused at the ticket (which it spends), one of
// another amount finds no ticket and is refused.
func TestSolanaV1PaymentBoundAtItsTicket(t *testing.T) {
	c := svmtest.Cases(t)[0]
	s := newSVMSellerV1(t, c)
	h := newHarness(t, memory.New(), solanaRules())
	b := h.buyer()
	url := s.srv.URL + "/weather"
	stranger := svmtest.Key(t, "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM")
	challenge := func() {
		t.Helper()
		resp, body := b.get(url, nil)
		if pr := b.readChallenge(resp, body); len(pr.Accepts) != 1 || pr.Accepts[0].Network != "solana-devnet" {
			t.Fatalf("v1 challenge after payguard: %d %s", resp.StatusCode, body)
		}
	}
	for _, tc := range []struct {
		name, reason string
		change       func(tx *svm.Transaction)
	}{
		{"another destination", "transfer pays token account", func(tx *svm.Transaction) {
			ata, _ := svm.AssociatedTokenAddress(stranger, c.Terms.Mint, svm.TokenProgram)
			tx.Keys[tx.Instructions[2].Accounts[2]] = ata
		}},
		{"another fee payer", "fee payer is", func(tx *svm.Transaction) { tx.Keys[0] = stranger }},
		{"a second transfer", "after the transfer only Memo is allowed", func(tx *svm.Transaction) {
			second := tx.Instructions[2]
			second.Accounts = append([]int(nil), second.Accounts...)
			tx.Instructions = append(tx.Instructions, second)
		}},
		{"another amount", "only for the option it passed on in a 402", func(tx *svm.Transaction) {
			copy(tx.Instructions[2].Data[1:9], svmtest.LE64(10001))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			challenge()
			tx, _ := svm.Decode(bytes.Clone(c.Raw))
			tc.change(tx)
			raw, _ := svmtest.Resign(t, tx)
			resp, body := b.get(url, svmPaymentV1(raw))
			r := decodeRefusal(t, resp, body)
			if r.ReasonClass != "payment_mismatch" || !strings.Contains(strings.Join(r.Reasons, "; "), tc.reason) {
				t.Errorf("refusal %s; want payment_mismatch naming %q", body, tc.reason)
			}
		})
	}
	if s.seen.Load() != 0 {
		t.Fatalf("changed v1 transactions reached the seller: %d", s.seen.Load())
	}
	challenge()
	if resp, body := b.get(url, svmPaymentV1(c.Raw)); resp.StatusCode != http.StatusOK {
		t.Fatalf("the approved v1 payment: %d %s", resp.StatusCode, body)
	}
	challenge()
	resp, body := b.get(url, svmPaymentV1(c.Raw))
	if r := decodeRefusal(t, resp, body); r.ReasonClass != "payment_replay" {
		t.Errorf("replayed v1 payment: %s", body)
	}
	if s.paid.Load() != 1 || s.seen.Load() != 1 {
		t.Errorf("seller saw %d payments and settled %d; want the approved one once", s.seen.Load(), s.paid.Load())
	}
}

func (s *svmSeller) terms() svm.Terms { return svmOfferTerms(s.offer) }

// svmOfferTerms are what a Solana offer lets a transaction do, as a facilitator reads them.
func svmOfferTerms(o x402.Requirement) svm.Terms {
	payTo, _ := svm.ParseKey(o.PayTo)
	mint, _ := svm.ParseKey(o.Asset)
	fp, _, _ := o.ExtraString("feePayer")
	feePayer, _ := svm.ParseKey(fp)
	amount, _ := x402.ParseAtomic(o.Amount)
	memo, hasMemo, _ := o.ExtraString("memo")
	return svm.Terms{PayTo: payTo, Mint: mint, FeePayer: feePayer, Amount: amount, Memo: memo, HasMemo: hasMemo}
}

// callSolana is the MCP seller's answer to a Solana payment: verified against its offer as a facilitator
// would, then settled.
func (s *mcpSeller) callSolana(m rpcMsg, pl *x402.PaymentPayload) map[string]any {
	text, _ := pl.ExactSVM()
	raw, _ := base64.StdEncoding.DecodeString(text)
	tx, err := svm.Decode(raw)
	if err == nil {
		_, err = svm.CheckExact(tx, svmOfferTerms(s.offers[0]))
	}
	if err != nil {
		return s.paymentRequired(m.ID)
	}
	amount, _ := x402.ParseAtomic(s.offers[0].Amount)
	s.paid.Add(1)
	s.settled.Add(int64(amount))
	return map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": map[string]any{
		"content": []any{map[string]any{"type": "text", "text": `{"weather":"foggy"}`}},
		"_meta": map[string]any{"x402/payment-response": map[string]any{"success": true, "network": s.offers[0].Network,
			"transaction": "5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnbJLgp8uirBgmQpjKhoR4tjF3ZpRzrFmBV6UjKdiSZkQUW"}}}}
}

// x402 over MCP: a Solana payment in params._meta["x402/payment"] is bound by the same paymentTerms as a
// payment header: the official payment is released once and its settlement committed; a transaction paying
// another token account, or its replay, is answered with a JSON-RPC error and never reaches the seller.
func TestMCPSolanaPaymentBound(t *testing.T) {
	c := svmtest.Cases(t)[0]
	var offer x402.Requirement
	if err := json.Unmarshal(c.Requirement, &offer); err != nil {
		t.Fatal(err)
	}
	s := newMCPSeller(t, "both", false, offer)
	h := newHarness(t, memory.New(), solanaRules())
	b := h.mcpBuyer(s.url())
	payment := func(pr *x402.PaymentRequired, raw []byte) map[string]any {
		return map[string]any{"x402/payment": map[string]any{"x402Version": 2, "resource": pr.Resource, "accepted": pr.Accepts[0],
			"payload": map[string]any{"transaction": base64.StdEncoding.EncodeToString(raw)}}}
	}
	_, first := b.call(nil)
	pr := termsOf(t, first)
	if pr == nil || len(pr.Accepts) != 1 || pr.Accepts[0].Network != x402.SolanaDevnet {
		t.Fatalf("terms after payguard: %s", allTerms(first))
	}
	tx, _ := svm.Decode(bytes.Clone(c.Raw))
	stranger := svmtest.Key(t, "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM")
	ata, _ := svm.AssociatedTokenAddress(stranger, c.Terms.Mint, svm.TokenProgram)
	tx.Keys[tx.Instructions[2].Accounts[2]] = ata
	other, _ := svmtest.Resign(t, tx)
	before := s.x402In.Load()
	_, refused := b.call(payment(pr, other))
	if e, _ := refused["error"].(map[string]any); e == nil || !strings.Contains(allTerms(refused), "transfer pays token account") {
		t.Fatalf("a transaction paying another account: %s", allTerms(refused))
	}
	if s.x402In.Load() != before {
		t.Fatal("the refused payment reached the seller")
	}
	_, paid := b.call(payment(pr, c.Raw))
	if res, _ := paid["result"].(map[string]any); res == nil || res["isError"] == true {
		t.Fatalf("official Solana payment over MCP: %s", allTerms(paid))
	}
	if s.paid.Load() != 1 || h.budgetState().SpentMicros != 10000 {
		t.Fatalf("seller settled %d; budget spent %d micros", s.paid.Load(), h.budgetState().SpentMicros)
	}
	seen := s.x402In.Load()
	_, again := b.call(payment(pr, c.Raw))
	if e, _ := again["error"].(map[string]any); e == nil || !strings.Contains(allTerms(again), "replay") {
		t.Errorf("replayed Solana payment over MCP: %s", allTerms(again))
	}
	if s.x402In.Load() != seen {
		t.Error("a replayed Solana payment reached the seller")
	}
}

// solanaRules are the test rules with Solana devnet allowed.
func solanaRules() policy.Rules {
	r := testRules()
	r.AllowedNetworks = append(r.AllowedNetworks, x402.SolanaDevnet)
	return r
}

// svmPayment is the v2 payment header for a transaction, answering option i of the challenge the buyer saw.
func svmPayment(t *testing.T, pr *x402.PaymentRequired, raw []byte) http.Header {
	t.Helper()
	opt := pr.Accepts[0]
	pl := &x402.PaymentPayload{X402Version: x402.V2, Resource: pr.Resource, Accepted: &opt,
		Payload: json.RawMessage(fmt.Sprintf(`{"transaction":%q}`, base64.StdEncoding.EncodeToString(raw)))}
	h, err := x402.EncodeHeaderJSON(pl)
	if err != nil {
		t.Fatal(err)
	}
	return http.Header{x402.HeaderPaymentSignature: {h}}
}

// An official Solana payment of an allowed option is released once, and its reservation is committed; the
// same signed transaction again (in other JSON bytes) is a replay.
func TestSolanaPaymentReleasedOnce(t *testing.T) {
	c := svmtest.Cases(t)[0] // $0.01 of devnet USDC
	s := newSVMSeller(t, c)
	h := newHarness(t, memory.New(), solanaRules())
	b := h.buyer()
	url := s.srv.URL + "/weather"
	resp, body := b.get(url, nil)
	if resp.StatusCode != http.StatusPaymentRequired {
		t.Fatalf("first response %d %s", resp.StatusCode, body)
	}
	pr := b.readChallenge(resp, body)
	if len(pr.Accepts) != 1 || pr.Accepts[0].Network != x402.SolanaDevnet {
		t.Fatalf("challenge after payguard: %+v", pr.Accepts)
	}
	pay := svmPayment(t, pr, c.Raw)
	if resp, body := b.get(url, pay); resp.StatusCode != http.StatusOK {
		t.Fatalf("official Solana payment: %d %s", resp.StatusCode, body)
	}
	if s.paid.Load() != 1 {
		t.Fatalf("seller settled %d payments", s.paid.Load())
	}
	if got := h.budgetState().SpentUSD; got != "0.01" {
		t.Errorf("spent today = %s, want 0.01", got)
	}
	// The same payload again, and the same transaction in a payload with other JSON spacing.
	resp, body = b.get(url, nil)
	pr = b.readChallenge(resp, body)
	again := svmPayment(t, pr, c.Raw)
	//lint:ignore SA1008 svmPayment keys the header as x402 spells it on the wire
	dec, _ := base64.StdEncoding.DecodeString(again[x402.HeaderPaymentSignature][0])
	spaced := base64.StdEncoding.EncodeToString(bytes.ReplaceAll(dec, []byte(`":`), []byte(`": `)))
	for _, hdr := range []http.Header{pay, {x402.HeaderPaymentSignature: {spaced}}} {
		resp, body := b.get(url, hdr)
		if r := decodeRefusal(t, resp, body); r.ReasonClass != "payment_replay" {
			t.Errorf("replayed Solana payment: %s", body)
		}
	}
	if s.seen.Load() != 1 {
		t.Errorf("replays reached the seller: it saw %d payments", s.seen.Load())
	}
}

// A Solana payment that does anything but the approved transfer is refused before the seller, with a reason
// naming what differs; the approved payment still goes through afterwards (a refusal does not spend the
// ticket it could not match).
func TestSolanaPaymentMustDoWhatItNames(t *testing.T) {
	c := svmtest.Cases(t)[0]
	s := newSVMSeller(t, c)
	h := newHarness(t, memory.New(), solanaRules())
	b := h.buyer()
	url := s.srv.URL + "/weather"
	resp, body := b.get(url, nil)
	pr := b.readChallenge(resp, body)
	stranger := svmtest.Key(t, "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM")
	mainnetUSDC := svmtest.Key(t, "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v")
	for _, tc := range []struct {
		name, reason string
		change       func(tx *svm.Transaction)
	}{
		{"another amount", "moves 10001 atomic units", func(tx *svm.Transaction) {
			copy(tx.Instructions[2].Data[1:9], svmtest.LE64(10001))
		}},
		{"another mint", "transfer moves mint EPjFWdd5", func(tx *svm.Transaction) {
			tx.Keys = append(tx.Keys, mainnetUSDC)
			tx.Header.ReadonlyUnsigned++
			tx.Instructions[2].Accounts[1] = len(tx.Keys) - 1
		}},
		{"another destination", "transfer pays token account", func(tx *svm.Transaction) {
			ata, _ := svm.AssociatedTokenAddress(stranger, c.Terms.Mint, svm.TokenProgram)
			tx.Keys[tx.Instructions[2].Accounts[2]] = ata
		}},
		{"a second transfer", "after the transfer only Memo is allowed", func(tx *svm.Transaction) {
			second := tx.Instructions[2]
			second.Accounts = append([]int(nil), second.Accounts...)
			tx.Instructions = append(tx.Instructions, second)
		}},
		{"another fee payer", "fee payer is", func(tx *svm.Transaction) {
			tx.Keys[0] = stranger
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tx, _ := svm.Decode(bytes.Clone(c.Raw))
			tc.change(tx)
			raw, _ := svmtest.Resign(t, tx)
			resp, body := b.get(url, svmPayment(t, pr, raw))
			r := decodeRefusal(t, resp, body)
			if r.ReasonClass != "payment_mismatch" || !strings.Contains(strings.Join(r.Reasons, "; "), tc.reason) {
				t.Errorf("refusal %s; want payment_mismatch naming %q", body, tc.reason)
			}
		})
	}
	if s.seen.Load() != 0 {
		t.Fatalf("changed transactions reached the seller: %d", s.seen.Load())
	}
	if resp, body := b.get(url, svmPayment(t, pr, c.Raw)); resp.StatusCode != http.StatusOK {
		t.Fatalf("the approved payment after the refusals: %d %s", resp.StatusCode, body)
	}
}

// Over the per-payment cap, a Solana option is refused at the 402 and its payment (sent without asking) is
// refused too: neither reaches the seller.
func TestSolanaPaymentOverCap(t *testing.T) {
	c := svmtest.Cases(t)[0]
	s := newSVMSeller(t, c)
	rules := solanaRules()
	rules.MaxPerPaymentUSD = 5_000 // $0.005: the option asks $0.01
	h := newHarness(t, memory.New(), rules)
	b := h.buyer()
	url := s.srv.URL + "/weather"
	resp, body := b.get(url, nil)
	if r := decodeRefusal(t, resp, body); r.Decision != "block" {
		t.Fatalf("402 over the cap: %s", body)
	}
	pr := &x402.PaymentRequired{X402Version: x402.V2, Resource: &x402.ResourceInfo{URL: url}, Accepts: []x402.Requirement{s.offer}}
	resp, body = b.get(url, svmPayment(t, pr, c.Raw))
	if r := decodeRefusal(t, resp, body); r.Decision == "allow" {
		t.Fatalf("unasked payment over the cap: %s", body)
	}
	if s.seen.Load() != 0 {
		t.Fatalf("a payment over the cap reached the seller")
	}
}

// A v1 Solana payment that answers no guarded 402 names no payee or asset, and its transaction pays a token
// account: nothing approved can be bound to it, so it is refused with that reason (never forwarded).
func TestSolanaV1PaymentWithoutTicketRefused(t *testing.T) {
	c := svmtest.Cases(t)[0]
	s := newSVMSeller(t, c)
	h := newHarness(t, memory.New(), solanaRules())
	pl := fmt.Sprintf(`{"x402Version":1,"scheme":"exact","network":"solana-devnet","payload":{"transaction":%q}}`,
		base64.StdEncoding.EncodeToString(c.Raw))
	resp, body := h.buyer().get(s.srv.URL+"/weather", http.Header{x402.HeaderXPayment: {base64.StdEncoding.EncodeToString([]byte(pl))}})
	r := decodeRefusal(t, resp, body)
	if r.ReasonClass != "payment_mismatch" || !strings.Contains(strings.Join(r.Reasons, "; "), "only for the option it passed on in a 402") {
		t.Fatalf("v1 Solana payment: %s", body)
	}
	if s.seen.Load() != 0 {
		t.Fatal("v1 Solana payment reached the seller")
	}
}

// paymentTerms reads every official Solana payment (each network, Token-2022, a seller memo) and refuses
// payloads that are not one: no transaction, not base64, too long, a requirement without a fee payer.
func TestPaymentTermsSolana(t *testing.T) {
	for _, c := range svmtest.Cases(t) {
		var req x402.Requirement
		if err := json.Unmarshal(c.Requirement, &req); err != nil {
			t.Fatal(err)
		}
		req.Version = x402.V2
		pl := &x402.PaymentPayload{X402Version: x402.V2, Accepted: &req,
			Payload: json.RawMessage(fmt.Sprintf(`{"transaction":%q}`, c.Transaction))}
		tm, err := paymentTerms(pl)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		if !strings.HasPrefix(tm.authorization, "x402-svm-message\x00"+req.Network+"\x00") {
			t.Errorf("%s: authorization key %q", c.Name, tm.authorization)
		}
	}
	c := svmtest.Cases(t)[0]
	var req x402.Requirement
	json.Unmarshal(c.Requirement, &req)
	req.Version = x402.V2
	noFeePayer := req
	noFeePayer.Extra = json.RawMessage(`{}`)
	numericFeePayer := req
	numericFeePayer.Extra = json.RawMessage(`{"feePayer":1}`)
	evmPayTo := req
	evmPayTo.PayTo = sellerPayTo
	for _, tc := range []struct {
		name, payload, reason string
		req                   x402.Requirement
	}{
		{"no transaction", `{}`, "no transaction", req},
		{"an EVM authorization", `{"signature":"0x00","authorization":{}}`, "no transaction", req},
		{"url-safe base64", fmt.Sprintf(`{"transaction":%q}`, base64.URLEncoding.EncodeToString(c.Raw)), "not standard base64", req},
		{"longer than any transaction", fmt.Sprintf(`{"transaction":%q}`, strings.Repeat("A", 1648)), "longer than any Solana transaction", req},
		{"not a transaction", `{"transaction":"AAAA"}`, "payload.transaction unreadable", req},
		{"no feePayer", fmt.Sprintf(`{"transaction":%q}`, c.Transaction), "names no extra.feePayer", noFeePayer},
		{"feePayer not a string", fmt.Sprintf(`{"transaction":%q}`, c.Transaction), "names no extra.feePayer", numericFeePayer},
		{"an EVM payTo", fmt.Sprintf(`{"transaction":%q}`, c.Transaction), "payTo is not a Solana address", evmPayTo},
	} {
		r := tc.req
		_, err := paymentTerms(&x402.PaymentPayload{X402Version: x402.V2, Accepted: &r, Payload: json.RawMessage(tc.payload)})
		if err == nil || !strings.Contains(err.Error(), tc.reason) {
			t.Errorf("%s: %v; want %q", tc.name, err, tc.reason)
		}
	}
}

// A Solana payee on the sanctions list (a SOL digital currency address, loaded by the real OFAC loader) is
// blocked at the 402 as an EVM one is; the same letters in another case are another key and are not.
func TestSolanaPayeeScreenedExactly(t *testing.T) {
	c := svmtest.Cases(t)[0]
	var req x402.Requirement
	json.Unmarshal(c.Requirement, &req)
	for _, tc := range []struct {
		listed   string
		decision string
	}{
		{req.PayTo, "block"},
		{strings.ToLower(req.PayTo), "allow"},
	} {
		dir := t.TempDir()
		row := `9001,"EXAMPLE SOLANA ENTITY","-0- ","CYBER2",-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,"Digital Currency Address - SOL ` + tc.listed + `."` + "\n"
		if err := os.WriteFile(filepath.Join(dir, sanctions.FileSDN), []byte(row), 0o644); err != nil {
			t.Fatal(err)
		}
		list, err := sanctions.LoadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		s := newSVMSeller(t, c)
		h := newHarness(t, memory.New(), solanaRules(), withSanctions(list))
		resp, body := h.buyer().get(s.srv.URL+"/weather", nil)
		switch tc.decision {
		case "block":
			r := decodeRefusal(t, resp, body)
			if r.Decision != "block" || !strings.Contains(strings.Join(r.Reasons, "; "), "payTo "+req.PayTo+" is an OFAC SDN-listed address") {
				t.Errorf("listed Solana payee: %s", body)
			}
		case "allow":
			if resp.StatusCode != http.StatusPaymentRequired {
				t.Errorf("payee listed only in another letter case: %d %s", resp.StatusCode, body)
			}
		}
	}
}
