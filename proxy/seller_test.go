package proxy

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/payguard/payguard/x402"
)

// Addresses and assets from the fixtures (Base Sepolia USDC) and Base mainnet USDC.
const (
	sellerPayTo     = "0xf54127927F219FB78C8D1A1fF3D7dc6D7f70C98E"
	otherPayTo      = "0x1111111111111111111111111111111111111111"
	sanctionedPayTo = "0x2222222222222222222222222222222222222222"
	baseSepoliaUSDC = "0x036CbD53842c5426634e7929541eC2318f3dCF7e"
	baseUSDC        = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"
	buyerAddress    = "0xf9A721373C534a2d7dbAad7b5bDF25BED26B51c1"
)

// seller is an httptest seller that speaks x402 like the official SDK sellers (fixtures' shapes): a 402
// challenge (v2 header or v1 body), then verify (option match, recipient, value, nonce) and settle on the
// paid retry. It counts what it settled, which is what the buyer really paid. Every response carries forged
// X-Payguard-* headers that the proxy must strip.
type seller struct {
	version int
	offers  []x402.Requirement // v2-style requirements (network as CAIP-2 for v2, v1 name for v1)
	bazaar  json.RawMessage    // v2 extensions.bazaar, when set (index_attack_test.go)
	srv     *httptest.Server

	mu      sync.Mutex
	nonces  map[string]bool
	settled atomic.Int64 // atomic units settled
	paid    atomic.Int64 // settled payments
	seen    atomic.Int64 // requests that carried a payment header
	hits    atomic.Int64 // all requests
}

func newSeller(t *testing.T, version int, tls bool, offers ...x402.Requirement) *seller {
	t.Helper()
	s := &seller{version: version, offers: offers, nonces: map[string]bool{}}
	if tls {
		s.srv = httptest.NewTLSServer(s)
	} else {
		s.srv = httptest.NewServer(s)
	}
	t.Cleanup(s.srv.Close)
	return s
}

func (s *seller) url(path string) string { return s.srv.URL + path }

func offer(version int, network, asset, payTo, amount string) x402.Requirement {
	return x402.Requirement{Version: version, Scheme: "exact", Network: network, Amount: amount, Asset: asset,
		PayTo: payTo, MaxTimeoutSeconds: 60, Extra: json.RawMessage(`{"name":"USDC","version":"2"}`)}
}

func (s *seller) challenge(r *http.Request, reason string) *x402.PaymentRequired {
	url := "http://" + r.Host + r.URL.RequestURI()
	if r.TLS != nil {
		url = "https://" + r.Host + r.URL.RequestURI()
	}
	pr := &x402.PaymentRequired{X402Version: s.version, Error: reason}
	for _, o := range s.offers {
		if s.version == x402.V1 {
			o.Resource, o.Description, o.MimeType = url, "Weather report", "application/json"
		}
		pr.Accepts = append(pr.Accepts, o)
	}
	if s.version == x402.V2 {
		pr.Resource = &x402.ResourceInfo{URL: url, Description: "Weather report", MimeType: "application/json"}
		if s.bazaar != nil {
			pr.Extensions = map[string]json.RawMessage{"bazaar": s.bazaar}
		}
	}
	return pr
}

func (s *seller) send402(w http.ResponseWriter, r *http.Request, reason string) {
	pr := s.challenge(r, reason)
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	if s.version == x402.V2 {
		h, err := x402.EncodeHeaderJSON(pr)
		if err != nil {
			panic(err)
		}
		w.Header().Set(x402.HeaderPaymentRequired, h)
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusPaymentRequired)
		fmt.Fprint(w, "{}")
		return
	}
	b, err := json.Marshal(pr)
	if err != nil {
		panic(err)
	}
	w.WriteHeader(http.StatusPaymentRequired)
	w.Write(b)
}

func (s *seller) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.hits.Add(1)
	w.Header().Set("X-Payguard-Decision", "allow")
	w.Header().Set("X-Payguard-Receipt", "forged-by-seller")
	w.Header().Set("x-payguard-hold", "forged-by-seller")
	if r.URL.Path == "/free" {
		fmt.Fprint(w, `{"free":true}`)
		return
	}
	name := x402.HeaderPaymentSignature
	if s.version == x402.V1 {
		name = x402.HeaderXPayment
	}
	value := r.Header.Get(name)
	if value == "" {
		s.send402(w, r, "Payment required")
		return
	}
	s.seen.Add(1)
	pl, err := x402.DecodePaymentPayloadHeader(value)
	if err != nil {
		s.send402(w, r, "invalid_payload")
		return
	}
	var req *x402.Requirement
	for i := range s.offers {
		o := s.offers[i]
		if s.version == x402.V2 && pl.Accepted != nil && pl.Accepted.Equal(o) ||
			s.version == x402.V1 && pl.Scheme == o.Scheme && pl.Network == o.Network {
			req = &o
			break
		}
	}
	if req == nil {
		s.send402(w, r, "No matching payment requirements")
		return
	}
	ev, err := pl.ExactEVM()
	if err != nil || ev.Authorization == nil {
		s.send402(w, r, "invalid_payload")
		return
	}
	a := ev.Authorization
	if !x402.SameAddress(a.To, req.PayTo) {
		s.send402(w, r, "invalid_exact_evm_payload_recipient_mismatch")
		return
	}
	if a.Value != req.Amount {
		s.send402(w, r, "invalid_exact_evm_payload_authorization_value_mismatch")
		return
	}
	s.mu.Lock()
	used := s.nonces[a.Nonce]
	s.nonces[a.Nonce] = true
	s.mu.Unlock()
	if used {
		s.send402(w, r, "invalid_exact_evm_nonce_already_used")
		return
	}
	amount, err := x402.ParseAtomic(a.Value)
	if err != nil {
		s.send402(w, r, "invalid_payload")
		return
	}
	s.settled.Add(int64(amount))
	s.paid.Add(1)
	settle := x402.SettleResponse{Success: true, Payer: a.From, Transaction: "0xf034dd236f16a9dc19b2927063c377438f76fcb0bd4dbaddfd4852eed0d9e08e", Network: req.Network}
	h, _ := x402.EncodeHeaderJSON(settle)
	if s.version == x402.V2 {
		w.Header().Set(x402.HeaderPaymentResponse, h)
	} else {
		w.Header().Set(x402.HeaderXPaymentResponse, h)
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	fmt.Fprint(w, `{"city":"San Francisco","weather":"foggy","temperature":60}`)
}
