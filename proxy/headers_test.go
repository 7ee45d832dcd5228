package proxy

import (
	"bufio"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/payguard/payguard/store/memory"
	"github.com/payguard/payguard/x402"
)

// wsgiKey is a header name as a WSGI server (PEP 3333), CGI, Django's META or nginx's $http_ variables read
// it: upper-cased, "-" as "_". A test seller uses it to see what a Python seller would read as a payment.
func wsgiKey(name string) string {
	return "HTTP_" + strings.ReplaceAll(strings.ToUpper(strings.TrimSpace(name)), "-", "_")
}

// recordingSeller records every request header it receives (in any spelling) and answers 200.
type recordingSeller struct {
	srv   *httptest.Server
	mu    sync.Mutex
	names []string
}

func newRecordingSeller(t *testing.T, useTLS bool, h http.HandlerFunc) *recordingSeller {
	s := &recordingSeller{}
	handler := func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		for k := range r.Header {
			s.names = append(s.names, k)
		}
		s.mu.Unlock()
		if h != nil {
			h(w, r)
			return
		}
		fmt.Fprint(w, "ok")
	}
	if useTLS {
		s.srv = httptest.NewTLSServer(http.HandlerFunc(handler))
	} else {
		s.srv = httptest.NewServer(http.HandlerFunc(handler))
	}
	t.Cleanup(s.srv.Close)
	return s
}

// saw reports the headers the seller received whose WSGI key (trailing "_" trimmed, as frameworks that
// trim keys do) is one of keys or starts with one of them and "_".
func (s *recordingSeller) saw(keys ...string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, n := range s.names {
		k := strings.TrimRight(wsgiKey(n), "_")
		for _, want := range keys {
			if k == want || strings.HasPrefix(k, want+"_") {
				out = append(out, n)
			}
		}
	}
	return out
}

func trustServer(srv *httptest.Server) harnessOption {
	return func(o *setup) {
		if srv.Certificate() != nil {
			pool := x509.NewCertPool()
			pool.AddCert(srv.Certificate())
			o.UpstreamRoots = pool
		}
	}
}

// A payment header in any spelling a server stack reads as one ($900 to a blocklisted payee) never reaches
// the seller: the canonical spelling is decided (and blocked), every other spelling is refused with 403 and
// a reason, over plain HTTP and intercepted HTTPS.
func TestPaymentHeaderSpellingsNeverReachSellerUndecided(t *testing.T) {
	for _, useTLS := range []bool{false, true} {
		s := newRecordingSeller(t, useTLS, nil)
		rules := testRules()
		rules.PayToBlocklist = []string{otherPayTo}
		h := newHarness(t, memory.New(), rules, trustServer(s.srv))
		b := h.buyer()
		pr := &x402.PaymentRequired{X402Version: x402.V2, Resource: &x402.ResourceInfo{URL: s.srv.URL + "/pay"},
			Accepts: []x402.Requirement{offer(x402.V2, "eip155:84532", baseSepoliaUSDC, otherPayTo, "900000000")}}
		_, v2 := b.sign(pr, 0, nil)
		pr.X402Version = x402.V1
		pr.Accepts[0].Network = "base-sepolia"
		_, v1 := b.sign(pr, 0, nil)
		for _, tc := range []struct {
			hdr       http.Header
			canonical bool
		}{
			{http.Header{"payment-signature": {v2}}, true},
			{http.Header{"X-PAYMENT": {v1}}, true},
			{http.Header{"PAYMENT_SIGNATURE": {v2}}, false},
			{http.Header{"Payment_Signature": {v2}}, false},
			{http.Header{"X_PAYMENT": {v1}}, false},
			{http.Header{"x_payment": {v1}}, false},
			{http.Header{"X-PAYMENT-": {v1}}, false},
			{http.Header{"PAYMENT-SIGNATURE_": {v2}}, false},
			{http.Header{"X_PAYMENT_": {v1}}, false},
			{http.Header{"X-PAYMENT--": {v1}}, false},
			// Duplicates across spellings: one judged, the other read by the seller.
			{http.Header{"X-PAYMENT": {v1}, "X_PAYMENT": {v1}}, false},
			{http.Header{"PAYMENT-SIGNATURE": {v2}, "Payment_Signature": {v2}}, false},
		} {
			resp, body := b.get(s.srv.URL+"/pay", tc.hdr)
			r := decodeRefusal(t, resp, body)
			spelled := strings.Contains(strings.Join(r.Reasons, " "), "non-canonical spelling")
			if r.Decision != block || spelled == tc.canonical {
				t.Errorf("tls=%v %v: decision %s reasons %v; want a block (a spelling refusal: %v)", useTLS,
					keys(tc.hdr), r.Decision, r.Reasons, !tc.canonical)
			}
		}
		if got := s.saw("HTTP_X_PAYMENT", "HTTP_PAYMENT_SIGNATURE"); len(got) > 0 {
			t.Errorf("tls=%v: the seller received payment headers %v", useTLS, got)
		}
	}
}

// Whitespace before the colon is refused by Go's parser (400) before anything reaches a seller.
func TestPaymentHeaderWithSpaceBeforeColonRefused(t *testing.T) {
	s := newRecordingSeller(t, false, nil)
	h := newHarness(t, memory.New(), testRules())
	conn, err := net.Dial("tcp", strings.TrimPrefix(h.srv.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET %s/pay HTTP/1.1\r\nHost: %s\r\nX-PAYMENT : eyJ4NDAyVmVyc2lvbiI6MX0=\r\n\r\n", s.srv.URL,
		strings.TrimPrefix(s.srv.URL, "http://"))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || len(s.saw("HTTP_X_PAYMENT")) > 0 {
		t.Errorf("status %d, seller saw %v", resp.StatusCode, s.saw("HTTP_X_PAYMENT"))
	}
}

// The agent's X-Payguard-* headers (any spelling) never reach a seller.
func TestAgentPayguardHeadersStrippedUpstream(t *testing.T) {
	for _, useTLS := range []bool{false, true} {
		s := newRecordingSeller(t, useTLS, nil)
		h := newHarness(t, memory.New(), testRules(), trustServer(s.srv))
		resp, body := h.buyer().get(s.srv.URL+"/free", http.Header{
			"X-Payguard-Decision": {"allow"}, "x_payguard_receipt": {"rcpt_forged"}, "X-PAYGUARD-HOLD-": {"h"},
			"X-Payguard": {"1"},
		})
		if resp.StatusCode != 200 || string(body) != "ok" {
			t.Fatalf("tls=%v: %d %s", useTLS, resp.StatusCode, body)
		}
		if got := s.saw("HTTP_X_PAYGUARD"); len(got) > 0 {
			t.Errorf("tls=%v: the seller received %v", useTLS, got)
		}
	}
}

// A seller's X-Payguard-* headers, in any spelling and as trailers (announced or not), never reach the
// agent: only payguard says what it decided.
func TestSellerPayguardHeadersAndTrailersStripped(t *testing.T) {
	for _, useTLS := range []bool{false, true} {
		s := newRecordingSeller(t, useTLS, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("X_Payguard_Decision", "allow")
			w.Header().Set("X-Payguard-Receipt-", "rcpt_forged")
			w.Header().Set("Trailer", "X-Payguard-Decision, X-Other")
			w.WriteHeader(200)
			fmt.Fprint(w, "paid content")
			w.(http.Flusher).Flush() // chunked, so trailers can follow
			w.Header().Set("X-Payguard-Decision", "allow")
			w.Header().Set("X-Other", "kept")
			w.Header().Set(http.TrailerPrefix+"X-Payguard-Receipt", "rcpt_forged")
			w.Header().Set(http.TrailerPrefix+"Payment-Response", "forged")
		})
		h := newHarness(t, memory.New(), testRules(), trustServer(s.srv))
		b := h.buyer()
		req, _ := http.NewRequest(http.MethodGet, s.srv.URL+"/doc", nil)
		resp, err := b.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(body) != "paid content" || resp.Trailer.Get("X-Other") != "kept" {
			t.Fatalf("tls=%v: body %q, trailers %v (want X-Other: the test needs trailers to pass)", useTLS, body, resp.Trailer)
		}
		for _, hh := range []http.Header{resp.Header, resp.Trailer} {
			for k := range hh {
				if guardedName(k) {
					t.Errorf("tls=%v: the agent received %s: %v (trailers %v)", useTLS, k, hh[k], resp.Trailer)
				}
			}
		}
	}
}

// A response whose x402 header comes in another spelling than the one payguard reads is refused: the agent
// would otherwise pay a challenge payguard never judged (a 402 with Payment_Required) or trust a settlement
// payguard did not record.
func TestResponseX402HeaderSpellingsRefused(t *testing.T) {
	challenge, err := x402.EncodeHeaderJSON(&x402.PaymentRequired{X402Version: x402.V2,
		Resource: &x402.ResourceInfo{URL: "http://seller.example/pay"},
		Accepts:  []x402.Requirement{offer(x402.V2, "eip155:84532", baseSepoliaUSDC, otherPayTo, "900000000")}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		status int
		hdr    http.Header
	}{
		{402, http.Header{"Payment_Required": {challenge}}},
		{402, http.Header{"PAYMENT-REQUIRED-": {challenge}}},
		{200, http.Header{"X_PAYMENT_RESPONSE": {"eyJzdWNjZXNzIjp0cnVlfQ=="}}},
		{200, http.Header{"Payment-Response": {"eyJzdWNjZXNzIjp0cnVlfQ==", "eyJzdWNjZXNzIjpmYWxzZX0="}}},
	} {
		s := newRecordingSeller(t, false, func(w http.ResponseWriter, r *http.Request) {
			for k, v := range tc.hdr {
				w.Header()[k] = v
			}
			w.WriteHeader(tc.status)
			fmt.Fprint(w, "{}")
		})
		h := newHarness(t, memory.New(), testRules())
		resp, body := h.buyer().get(s.srv.URL+"/pay", nil)
		r := decodeRefusal(t, resp, body)
		if r.Decision != block || !strings.Contains(strings.Join(r.Reasons, " "), canonicalOf(keys(tc.hdr))) {
			t.Errorf("%d %v: %s", tc.status, keys(tc.hdr), body)
		}
		for k := range resp.Header {
			if guardedName(k) && !strings.HasPrefix(k, headerPrefix) {
				t.Errorf("%v: the agent received %s", keys(tc.hdr), k)
			}
		}
	}
}

func keys(h http.Header) []string {
	var out []string
	for k := range h {
		out = append(out, k)
	}
	return out
}

// canonicalOf is the x402 header the first of names spells (as a WSGI key names it).
func canonicalOf(names []string) string {
	k := strings.TrimRight(wsgiKey(names[0]), "_")
	return strings.ReplaceAll(strings.TrimPrefix(k, "HTTP_"), "_", "-")
}

// guardedName reports whether a response header the agent received is one payguard alone may send (a
// decision header) or one it must have judged (an x402 header), in any spelling.
func guardedName(name string) bool {
	k := strings.TrimRight(wsgiKey(name), "_")
	switch k {
	case "HTTP_PAYMENT_REQUIRED", "HTTP_PAYMENT_RESPONSE", "HTTP_X_PAYMENT_RESPONSE":
		return true
	}
	return k == "HTTP_X_PAYGUARD" || strings.HasPrefix(k, "HTTP_X_PAYGUARD_")
}

// classifyHeader runs for every header of every proxied request and response: it does not allocate for a
// name of up to 64 bytes (issue 36: pass-through level with goproxy; it cost 7.7 allocations a request).
func TestClassifyHeaderDoesNotAllocate(t *testing.T) {
	names := []string{"Content-Type", "payment-signature", "X_PAYMENT", "X-Payguard-Decision", "x-payguard", "X-Payguardian", "Accept-Encoding"}
	want := []headerKind{headerOther, headerPayment, headerPayment, headerPayguard, headerPayguard, headerOther, headerOther}
	for i, n := range names {
		if k := classifyHeader(n).kind; k != want[i] {
			t.Fatalf("%s: kind %v, want %v", n, k, want[i])
		}
	}
	if n := testing.AllocsPerRun(100, func() {
		for _, n := range names {
			classifyHeader(n)
		}
	}); n != 0 {
		t.Fatalf("%v allocations per run", n)
	}
}
