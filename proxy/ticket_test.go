package proxy

import (
	"net/http"
	"testing"
	"time"

	"github.com/payguard/payguard/internal/testutil"
	"github.com/payguard/payguard/store/memory"
	"github.com/payguard/payguard/x402"
)

// A ticket releases only the payment it was issued for: same method, URL, network, payee and amount, before
// it expires. v1 is used because a v1 payment that no ticket covers can never be allowed on its own (it names
// no asset), so every refusal below is the ticket's doing.
func TestTicketBindsRequestAndTerms(t *testing.T) {
	s := newSeller(t, x402.V1, false, offer(x402.V1, "base-sepolia", baseSepoliaUSDC, sellerPayTo, cent))
	clock := testutil.NewClock(time.Now())
	h := newHarness(t, memory.New(), testRules(), func(o *setup) { o.Now = clock.Now })
	b := h.buyer()
	url := s.url("/weather?city=sf")
	resp, body := b.get(url, nil)
	if resp.StatusCode != http.StatusPaymentRequired {
		t.Fatalf("first response %d %s", resp.StatusCode, body)
	}
	pr := b.readChallenge(resp, body)

	for _, tc := range []struct {
		name   string
		method string
		url    string
		tamper func(*x402.PaymentPayload, *x402.EIP3009Authorization)
	}{
		{"another URL", http.MethodGet, s.url("/weather?city=la"), nil},
		{"another method", http.MethodPost, url, nil},
		{"another network", http.MethodGet, url, func(p *x402.PaymentPayload, _ *x402.EIP3009Authorization) { p.Network = "base" }},
		{"another payee", http.MethodGet, url, func(_ *x402.PaymentPayload, a *x402.EIP3009Authorization) { a.To = otherPayTo }},
		{"another amount", http.MethodGet, url, func(_ *x402.PaymentPayload, a *x402.EIP3009Authorization) { a.Value = "9999" }},
	} {
		hdr, val := b.sign(pr, 0, tc.tamper)
		resp, body := b.do(tc.method, tc.url, http.Header{hdr: {val}})
		if r := decodeRefusal(t, resp, body); r.Decision == "allow" {
			t.Errorf("%s: %s", tc.name, body)
		}
	}
	if s.seen.Load() != 0 {
		t.Fatalf("payments the ticket does not cover reached the seller: %d", s.seen.Load())
	}

	// The matching payment goes through: the refusals above did not use the ticket up.
	hdr, val := b.sign(pr, 0, nil)
	if resp, body := b.get(url, http.Header{hdr: {val}}); resp.StatusCode != http.StatusOK {
		t.Fatalf("matching payment: %d %s", resp.StatusCode, body)
	}
	// Used once: a second, freshly signed payment for the same challenge is refused.
	hdr, val = b.sign(pr, 0, nil)
	if resp, body := b.get(url, http.Header{hdr: {val}}); decodeRefusal(t, resp, body).Decision == "allow" {
		t.Errorf("a used ticket released a second payment: %s", body)
	}

	// Expired: a fresh ticket (60 s, the minimum) is past its time two minutes later.
	resp, body = b.get(url, nil)
	pr = b.readChallenge(resp, body)
	clock.Advance(2 * time.Minute)
	hdr, val = b.sign(pr, 0, nil)
	if resp, body := b.get(url, http.Header{hdr: {val}}); decodeRefusal(t, resp, body).Decision == "allow" {
		t.Errorf("an expired ticket released a payment: %s", body)
	}
	if s.paid.Load() != 1 || s.seen.Load() != 1 {
		t.Errorf("seller saw %d payments and settled %d; want only the matching one", s.seen.Load(), s.paid.Load())
	}
}
