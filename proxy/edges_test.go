package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/payguard/payguard/screening/screeningtest"
	"github.com/payguard/payguard/store"
	"github.com/payguard/payguard/store/memory"
	"github.com/payguard/payguard/x402"
)

// An approval overrides only a hold: when the payee is sanctioned by the time the 402 comes back, the
// re-run preflight blocks and the approval is not used.
func TestBlockOutranksApproval(t *testing.T) {
	sanctions := screeningtest.Listed() // its listed addresses change between requests (a refresh)
	s := newSeller(t, x402.V2, false, offer(x402.V2, "eip155:84532", baseSepoliaUSDC, sellerPayTo, halfDollar))
	h := newHarness(t, memory.New(), testRules(), withSanctions(sanctions))
	b := h.buyer()
	resp, _ := b.get(s.url("/weather"), nil)
	id := resp.Header.Get(HeaderHold)
	if code, out := h.api("POST", "/v1/holds/"+id+"/approve", testToken, map[string]string{"by": "alice"}); code != 200 {
		t.Fatalf("approve: %d %s", code, out)
	}
	sanctions.List(sellerPayTo)
	resp, body := b.get(s.url("/weather"), nil)
	r := decodeRefusal(t, resp, body)
	if r.Decision != "block" || !strings.Contains(strings.Join(r.Reasons, " "), "OFAC") {
		t.Errorf("approved hold to a now-sanctioned payee: %s", body)
	}
	if code, out := h.api("GET", "/v1/holds/"+id, testToken, nil); code != 200 || !strings.Contains(string(out), `"status":"approved"`) {
		t.Errorf("the approval was consumed by a blocked request: %s", out)
	}
	if s.seen.Load() != 0 || h.budgetState().ReservedMicros != 0 {
		t.Error("a blocked payment reserved money or reached the seller")
	}
}

// A settlement failure keeps the reservation (SPEC §11.4): the money counts against today's cap.
func TestSettlementFailureKeepsReservation(t *testing.T) {
	mux := http.NewServeMux()
	var challenge string
	mux.HandleFunc("/weather", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get(x402.HeaderPaymentSignature) == "" {
			w.Header().Set(x402.HeaderPaymentRequired, challenge)
			w.WriteHeader(402)
			w.Write([]byte("{}"))
			return
		}
		h, _ := x402.EncodeHeaderJSON(x402.SettleResponse{Success: false, ErrorReason: "insufficient_funds", Network: "eip155:84532"})
		w.Header().Set(x402.HeaderPaymentResponse, h)
		w.WriteHeader(402)
		w.Write([]byte("{}"))
	})
	url := newRawServer(t, mux)
	pr := &x402.PaymentRequired{X402Version: 2, Resource: &x402.ResourceInfo{URL: url + "/weather"},
		Accepts: []x402.Requirement{offer(x402.V2, "eip155:84532", baseSepoliaUSDC, sellerPayTo, cent)}}
	challenge, _ = x402.EncodeHeaderJSON(pr)
	h := newHarness(t, memory.New(), testRules())
	ex := h.buyer().pay(url+"/weather", nil)
	if ex.paid == nil || ex.paid.StatusCode != 402 {
		t.Fatalf("settle failure should reach the buyer as the seller's 402: %+v", ex.paid)
	}
	if b := h.budgetState(); b.ReservedMicros != 10_000 || b.SpentMicros != 0 {
		t.Errorf("budget after a failed settlement = %+v, want 10000 kept reserved", b)
	}
}

func TestTunnelHostsAreNotIntercepted(t *testing.T) {
	s := newSeller(t, x402.V2, true, offer(x402.V2, "eip155:84532", baseSepoliaUSDC, sellerPayTo, fiveDollar))
	host := strings.TrimPrefix(s.srv.URL, "https://")
	h := newHarness(t, memory.New(), testRules(), func(o *setup) { o.TunnelHosts = []string{host} })
	// Through a tunnel the buyer talks TLS to the seller itself: payguard's CA is not involved, and the
	// $5 challenge (a block when inspected) arrives untouched.
	b := h.buyer()
	tr := b.client.Transport.(*http.Transport)
	tr.TLSClientConfig.RootCAs.AddCert(s.srv.Certificate())
	resp, _ := b.get(s.url("/weather"), nil)
	if resp.StatusCode != 402 || resp.Header.Get(x402.HeaderPaymentRequired) == "" || resp.TLS.PeerCertificates[0].Equal(s.srv.Certificate()) == false {
		t.Errorf("tunneled request: %d, peer %v", resp.StatusCode, resp.TLS.PeerCertificates[0].Subject)
	}
}

func TestUpstreamDownIs502(t *testing.T) {
	dead := newRawServer(t, http.NotFoundHandler())
	tlsDead := newSeller(t, x402.V2, true)
	h := newHarness(t, memory.New(), testRules(), trustUpstream(tlsDead))
	tlsURL := tlsDead.url("/x")
	tlsDead.srv.Close()
	// Close the plain server too: both addresses now refuse connections.
	closeRaw(dead)
	for _, u := range []string{dead + "/x", tlsURL} {
		resp, err := h.buyer().client.Get(u)
		if err != nil {
			// A MITM'd CONNECT is answered before the upstream is dialled, so the agent must get a 502
			// inside the tunnel rather than a dropped connection.
			t.Errorf("%s: %v, want a 502 response", u, err)
			continue
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadGateway {
			t.Errorf("%s: %d, want 502", u, resp.StatusCode)
		}
	}
	if got := counterValue(t, h.proxy.metrics.upstreamErrors); got != 2 {
		t.Errorf("upstream errors counted = %v, want 2", got)
	}
}

// Upstream TLS is verified: a seller whose certificate payguard does not trust gets no request, and the
// agent (which trusts payguard's CA, so would otherwise be fooled) gets 502.
func TestUpstreamTLSIsVerified(t *testing.T) {
	s := newSeller(t, x402.V2, true, offer(x402.V2, "eip155:84532", baseSepoliaUSDC, sellerPayTo, cent))
	h := newHarness(t, memory.New(), testRules()) // system roots only: the httptest certificate is unknown
	resp, body := h.buyer().get(s.url("/weather"), nil)
	if resp.StatusCode != http.StatusBadGateway {
		t.Errorf("untrusted upstream: %d %s, want 502", resp.StatusCode, body)
	}
	if s.hits.Load() != 0 {
		t.Errorf("a request reached an upstream whose certificate failed verification: %d", s.hits.Load())
	}
	if got := counterValue(t, h.proxy.metrics.upstreamErrors); got != 1 {
		t.Errorf("upstream errors = %v, want 1", got)
	}
	// The same seller, trusted through upstream_ca_files, is reached.
	h = newHarness(t, memory.New(), testRules(), trustUpstream(s))
	if resp, body := h.buyer().get(s.url("/free"), nil); resp.StatusCode != http.StatusOK {
		t.Errorf("trusted upstream: %d %s", resp.StatusCode, body)
	}
}

// A seller serving both generations sends the v2 header and a v1 body; both are narrowed to the allowed
// option so neither client generation can pay another one.
func TestHeaderAndV1BodyBothNarrowed(t *testing.T) {
	v2 := []x402.Requirement{
		offer(x402.V2, "eip155:84532", baseSepoliaUSDC, sellerPayTo, fiveDollar),
		offer(x402.V2, "eip155:84532", baseSepoliaUSDC, sellerPayTo, cent),
	}
	v1 := []x402.Requirement{
		offer(x402.V1, "base-sepolia", baseSepoliaUSDC, sellerPayTo, fiveDollar),
		offer(x402.V1, "base-sepolia", baseSepoliaUSDC, sellerPayTo, cent),
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/weather", func(w http.ResponseWriter, r *http.Request) {
		h, _ := x402.EncodeHeaderJSON(&x402.PaymentRequired{X402Version: 2, Resource: &x402.ResourceInfo{URL: "http://" + r.Host + "/weather"}, Accepts: v2})
		body, _ := json.Marshal(&x402.PaymentRequired{X402Version: 1, Error: "X-PAYMENT header is required", Accepts: v1})
		w.Header().Set(x402.HeaderPaymentRequired, h)
		w.WriteHeader(402)
		w.Write(body)
	})
	url := newRawServer(t, mux)
	h := newHarness(t, memory.New(), testRules())
	b := h.buyer()
	resp, body := b.get(url+"/weather", nil)
	if resp.StatusCode != 402 {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	hdr := b.readChallenge(resp, body)
	v1pr, err := x402.ParsePaymentRequired(body)
	if err != nil {
		t.Fatalf("narrowed v1 body unreadable: %v: %s", err, body)
	}
	if len(hdr.Accepts) != 1 || hdr.Accepts[0].Amount != cent || len(v1pr.Accepts) != 1 || v1pr.Accepts[0].Amount != cent {
		t.Errorf("header offers %+v, body offers %+v; want only the $0.01 option in both", hdr.Accepts, v1pr.Accepts)
	}
	if resp.ContentLength != int64(len(body)) {
		t.Errorf("Content-Length %d for a %d-byte body", resp.ContentLength, len(body))
	}
}

// The merchant domain the rules judge is the host the agent really pays, not the resource URL the seller
// writes into its challenge.
func TestSellerCannotClaimAnotherDomain(t *testing.T) {
	for _, version := range []int{x402.V2, x402.V1} {
		network := "eip155:84532"
		if version == x402.V1 {
			network = "base-sepolia"
		}
		o := offer(version, network, baseSepoliaUSDC, sellerPayTo, cent)
		mux := http.NewServeMux()
		mux.HandleFunc("/weather", func(w http.ResponseWriter, r *http.Request) {
			if version == x402.V2 {
				h, _ := x402.EncodeHeaderJSON(&x402.PaymentRequired{X402Version: 2,
					Resource: &x402.ResourceInfo{URL: "https://trusted.example/weather"}, Accepts: []x402.Requirement{o}})
				w.Header().Set(x402.HeaderPaymentRequired, h)
				w.WriteHeader(402)
				return
			}
			o1 := o
			o1.Resource = "https://trusted.example/weather"
			b, _ := json.Marshal(&x402.PaymentRequired{X402Version: 1, Accepts: []x402.Requirement{o1}})
			w.WriteHeader(402)
			w.Write(b)
		})
		url := newRawServer(t, mux)
		rules := testRules()
		rules.DomainBlocklist = []string{"127.0.0.1"}
		h := newHarness(t, memory.New(), rules)
		resp, body := h.buyer().get(url+"/weather", nil)
		r := decodeRefusal(t, resp, body)
		if r.Decision != "block" || !strings.Contains(strings.Join(r.Reasons, " "), "127.0.0.1 is on blocklist") {
			t.Errorf("v%d: seller claiming trusted.example: %s", version, body)
		}
	}
}

// A seller that answers a released payment with a fresh challenge (verify failed) gets it passed on with
// nothing to pay, and no second amount is reserved.
func TestChallengeAfterReleasedPaymentIsEmptied(t *testing.T) {
	for _, version := range []int{x402.V2, x402.V1} {
		network := "eip155:84532"
		if version == x402.V1 {
			network = "base-sepolia"
		}
		s := newSeller(t, version, false, offer(version, network, baseSepoliaUSDC, sellerPayTo, cent))
		h := newHarness(t, memory.New(), testRules())
		b := h.buyer()
		// The seller has already seen this nonce (as after a settle elsewhere): it refuses with a challenge.
		ex := b.pay(s.url("/weather"), func(_ *x402.PaymentPayload, a *x402.EIP3009Authorization) {
			s.mu.Lock()
			s.nonces[a.Nonce] = true
			s.mu.Unlock()
		})
		if ex.paid.StatusCode != 402 {
			t.Fatalf("v%d: %d %s", version, ex.paid.StatusCode, ex.paidBody)
		}
		pr := b.readChallenge(ex.paid, ex.paidBody)
		if len(pr.Accepts) != 0 || pr.Error != "invalid_exact_evm_nonce_already_used" {
			t.Errorf("v%d: challenge after a failed payment offers %+v (error %q); want none and the seller's error", version, pr.Accepts, pr.Error)
		}
		if bs := h.budgetState(); bs.ReservedMicros != 10_000 {
			t.Errorf("v%d: reserved %d, want only the first 10000", version, bs.ReservedMicros)
		}
	}
}

func TestMetricsOnPrivateRegistry(t *testing.T) {
	s := newSeller(t, x402.V2, false, offer(x402.V2, "eip155:84532", baseSepoliaUSDC, sellerPayTo, cent))
	h := newHarness(t, memory.New(), testRules())
	ex := h.buyer().pay(s.url("/weather"), nil)
	h.buyer().get(s.url("/weather"), http.Header{ex.header: {ex.payment}}) // a replay, refused
	code, out := h.api("GET", "/metrics", "", nil)
	if code != 200 {
		t.Fatalf("/metrics = %d", code)
	}
	text := string(out)
	for _, want := range []string{
		`payguard_decisions_total{outcome="allow",reason_class="all_rules_passed",stage="challenge"} 1`,
		`payguard_decisions_total{outcome="allow",reason_class="ticket",stage="payment"} 1`,
		`payguard_payments_released_total{scheme="exact",via="ticket"} 1`,
		`payguard_payments_refused_total{reason_class="payment_replay"} 1`,
		`payguard_decisions_total{outcome="block",reason_class="payment_replay",stage="payment"} 1`,
		`payguard_upstream_errors_total 0`,
		`payguard_settlements_total{result="success",scheme="exact"} 1`,
		`payguard_usd_spent_today 0.01`,
		`payguard_usd_reserved_today 0`,
		`payguard_holds_pending 0`,
		`payguard_ledger_up 1`,
		`payguard_decision_duration_seconds_count{stage="challenge"} 1`,
		`payguard_build_info{commit="`,
		// The Go runtime's and the process's series, as serve exports them (on payguard's own registry).
		"go_goroutines ", "process_cpu_seconds_total ",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if strings.Contains(text, " -1\n") {
		t.Error("/metrics has a -1 sentinel")
	}
}

// failingTickets is a store whose reservation-with-ticket write fails (a full disk, a lost connection).
type failingTickets struct{ *memory.Store }

func (failingTickets) ReserveTicket(context.Context, string, string, int64, int64, store.Ticket) (store.Ticket, error) {
	return store.Ticket{}, errors.New("disk full")
}

// An allowed challenge whose reservation and ticket cannot be written is refused, never passed on: the
// agent gets nothing to sign.
func TestTicketWriteFailureFailsClosed(t *testing.T) {
	s := newSeller(t, x402.V2, false, offer(x402.V2, "eip155:84532", baseSepoliaUSDC, sellerPayTo, cent))
	h := newHarness(t, failingTickets{memory.New()}, testRules())
	resp, body := h.buyer().get(s.url("/weather"), nil)
	r := decodeRefusal(t, resp, body)
	if r.Decision != "block" || !strings.Contains(strings.Join(r.Reasons, " "), "disk full") {
		t.Errorf("refusal %s, want a block naming the store failure", body)
	}
	if resp.Header.Get("Payment-Required") != "" || s.seen.Load() != 0 {
		t.Error("a challenge whose ticket was not written reached the agent, or a payment reached the seller")
	}
}

// A narrowed 402 keeps a Content-Length that matches its new body, over plain HTTP and MITM'd HTTPS, and
// is not sent chunked: goproxy drops the length of a response whose body is not the one its round trip
// returned (heldBody, challenge.go). The body is longer than net/http's 2 KiB buffer, which would
// otherwise size it itself over plain HTTP.
func TestNarrowed402KeepsItsLength(t *testing.T) {
	v1 := []x402.Requirement{
		offer(x402.V1, "base-sepolia", baseSepoliaUSDC, sellerPayTo, fiveDollar),
		offer(x402.V1, "base-sepolia", baseSepoliaUSDC, sellerPayTo, cent),
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := json.Marshal(&x402.PaymentRequired{X402Version: 1, Error: strings.Repeat("x", 3000), Accepts: v1})
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(402)
		w.Write(body)
	})
	plain := newRawServer(t, h)
	tlsSrv := httptest.NewTLSServer(h)
	t.Cleanup(tlsSrv.Close)
	hs := newHarness(t, memory.New(), testRules(), trustUpstream(&seller{srv: tlsSrv}))
	b := hs.buyer()
	for _, url := range []string{plain + "/paid", tlsSrv.URL + "/paid"} {
		resp, body := b.get(url, nil)
		if resp.StatusCode != 402 {
			t.Fatalf("%s: status %d: %s", url, resp.StatusCode, body)
		}
		pr, err := x402.ParsePaymentRequired(body)
		if err != nil || len(pr.Accepts) != 1 || pr.Accepts[0].Amount != cent {
			t.Fatalf("%s: body not narrowed to the $0.01 option (%v): %.200s", url, err, body)
		}
		if resp.ContentLength != int64(len(body)) || len(resp.TransferEncoding) != 0 {
			t.Errorf("%s: Content-Length %d, Transfer-Encoding %v for a %d-byte body; want the length, not chunked",
				url, resp.ContentLength, resp.TransferEncoding, len(body))
		}
	}
}

// An MCP tools/call answer the guard narrows keeps a Content-Length that matches its new body over MITM'd
// HTTPS, as a 402 does (heldBody): the same mechanism, for every response the guard may rewrite.
func TestNarrowedMCPAnswerKeepsItsLength(t *testing.T) {
	s := newMCPSeller(t, "both", false,
		offer(x402.V2, "eip155:84532", baseSepoliaUSDC, sellerPayTo, fiveDollar),
		offer(x402.V2, "eip155:84532", baseSepoliaUSDC, sellerPayTo, cent))
	tlsSrv := httptest.NewTLSServer(s)
	t.Cleanup(tlsSrv.Close)
	hs := newHarness(t, memory.New(), testRules(), trustUpstream(&seller{srv: tlsSrv}))
	b := hs.mcpBuyer(tlsSrv.URL + "/mcp")
	resp, msg := b.call(nil)
	terms := termsOf(t, msg)
	if len(terms.Accepts) != 1 || terms.Accepts[0].Amount != cent {
		t.Fatalf("the answer was not narrowed to the $0.01 option: %+v", terms.Accepts)
	}
	if resp.ContentLength < 0 || len(resp.TransferEncoding) != 0 {
		t.Errorf("narrowed MCP answer: Content-Length %d, Transfer-Encoding %v; want its length, not chunked",
			resp.ContentLength, resp.TransferEncoding)
	}
}
