package proxy

import (
	"context"
	"crypto/tls"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"github.com/payguard/payguard/store"
	"github.com/payguard/payguard/store/memory"
	"github.com/payguard/payguard/x402"
)

// The agent gave up on its request (its connection closed) while the hold waited, and a person approved
// afterwards, with the given-up request still parked on the hold (MITM'd HTTPS requests are not cancelled
// when the agent goes away). The agent's retry of the same request is paid, once: the approval is spent by
// the payment that goes through, not by a 402 handed to a connection nobody reads.
func TestApprovalOutlivesAbandonedRequest(t *testing.T) {
	s := newSeller(t, x402.V2, true, offer(x402.V2, "eip155:84532", baseSepoliaUSDC, sellerPayTo, halfDollar))
	h := newHarness(t, memory.New(), testRules(), trustUpstream(s), func(o *setup) { o.HoldWait = 2 * time.Second })

	// The agent's first request, which it abandons.
	u, _ := url.Parse(h.srv.URL)
	tr := &http.Transport{Proxy: http.ProxyURL(u), TLSClientConfig: &tls.Config{RootCAs: h.caPool}}
	defer tr.CloseIdleConnections()
	ctx, giveUp := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", s.url("/weather"), nil)
	done := make(chan error, 1)
	go func() {
		resp, err := (&http.Client{Transport: tr}).Do(req)
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	for h.proxy.waiters.count() == 0 {
		time.Sleep(time.Millisecond) // polling for an event, not timing anything
	}
	giveUp()
	if err := <-done; err == nil {
		t.Fatal("the abandoned request returned normally")
	}
	id := h.holds("pending")[0].ID
	if code, out := h.api("POST", "/v1/holds/"+id+"/approve", testToken, map[string]string{"by": "alice"}); code != 200 {
		t.Fatalf("approve: %d %s", code, out)
	}

	// The retry of the same request: released on the approval and paid.
	b := h.buyer()
	ex := b.pay(s.url("/weather"), nil)
	if ex.first.StatusCode != http.StatusPaymentRequired || ex.first.Header.Get(HeaderHold) != id || ex.paid == nil || ex.paid.StatusCode != 200 {
		t.Fatalf("retry after the approval: first %d %v %s; paid %v", ex.first.StatusCode, ex.first.Header, ex.firstBody, ex.paid)
	}
	if s.paid.Load() != 1 {
		t.Fatalf("seller paid %d, want 1", s.paid.Load())
	}
	hd, _ := h.store.GetHold(t.Context(), id)
	if hd.Status != store.HoldUsed {
		t.Errorf("hold after the payment: %s, want used", hd.Status)
	}
	// One payment per approval: the same request again is a new hold for a person.
	resp, body := b.get(s.url("/weather"), nil)
	if r := decodeRefusal(t, resp, body); r.Decision != "hold" || resp.Header.Get(HeaderHold) == id {
		t.Errorf("third request: %s", body)
	}
	if s.paid.Load() != 1 {
		t.Errorf("seller paid %d after the third request, want 1", s.paid.Load())
	}
}

// An approval is bound to the terms the person saw: the same URL answering with another payee is a new
// hold, and the approval is still there for the request it was given for.
func TestApprovalBoundToTerms(t *testing.T) {
	approved := newSeller(t, x402.V2, false, offer(x402.V2, "eip155:84532", baseSepoliaUSDC, sellerPayTo, halfDollar))
	other := newSeller(t, x402.V2, false, offer(x402.V2, "eip155:84532", baseSepoliaUSDC, otherPayTo, halfDollar))
	var switched atomic.Bool
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if switched.Load() {
			other.ServeHTTP(w, r)
		} else {
			approved.ServeHTTP(w, r)
		}
	}))
	defer front.Close()
	h := newHarness(t, memory.New(), testRules())
	b := h.buyer()
	resp, body := b.get(front.URL+"/weather", nil)
	id := resp.Header.Get(HeaderHold)
	if resp.StatusCode != http.StatusForbidden || id == "" {
		t.Fatalf("want a hold: %d %s", resp.StatusCode, body)
	}
	if code, out := h.api("POST", "/v1/holds/"+id+"/approve", testToken, map[string]string{"by": "alice"}); code != 200 {
		t.Fatalf("approve: %d %s", code, out)
	}
	switched.Store(true)
	resp, body = b.get(front.URL+"/weather", nil)
	if r := decodeRefusal(t, resp, body); r.Decision != "hold" || resp.Header.Get(HeaderHold) == id {
		t.Fatalf("another payee on the approved URL: %s (hold %s)", body, resp.Header.Get(HeaderHold))
	}
	switched.Store(false)
	if ex := b.pay(front.URL+"/weather", nil); ex.paid == nil || ex.paid.StatusCode != 200 || approved.paid.Load() != 1 || other.paid.Load() != 0 {
		t.Fatalf("the approved terms: first %d, paid %v", ex.first.StatusCode, ex.paid)
	}
}

// Two challenges released on one approval (two requests came back before either paid) let only one payment
// through: the approval is spent by the first payment, the second is refused before the seller.
func TestApprovalSpentByOnePayment(t *testing.T) {
	s := newSeller(t, x402.V2, false, offer(x402.V2, "eip155:84532", baseSepoliaUSDC, sellerPayTo, halfDollar))
	h := newHarness(t, memory.New(), testRules(), trustUpstream(s))
	b := h.buyer()
	id := heldRequest(t, h, s)
	if code, out := h.api("POST", "/v1/holds/"+id+"/approve", testToken, map[string]string{"by": "alice"}); code != 200 {
		t.Fatalf("approve: %d %s", code, out)
	}
	var payments [2]http.Header
	for i := range payments {
		resp, body := b.get(s.url("/report"), nil)
		if resp.StatusCode != http.StatusPaymentRequired {
			t.Fatalf("challenge %d on the approval: %d %s", i, resp.StatusCode, body)
		}
		name, value := b.sign(b.readChallenge(resp, body), 0, nil)
		payments[i] = http.Header{name: {value}}
	}
	var paid, refused int
	for _, hdr := range payments {
		resp, body := b.get(s.url("/report"), hdr)
		switch resp.StatusCode {
		case 200:
			paid++
		case http.StatusForbidden:
			refused++
			if r := decodeRefusal(t, resp, body); r.Decision != "block" {
				t.Errorf("second payment: %s", body)
			}
		default:
			t.Errorf("payment: %d %s", resp.StatusCode, body)
		}
	}
	if paid != 1 || refused != 1 || s.paid.Load() != 1 || s.seen.Load() != 1 {
		t.Fatalf("paid %d, refused %d, seller paid %d and saw %d payments; want one of each and one reaching the seller",
			paid, refused, s.paid.Load(), s.seen.Load())
	}
}
