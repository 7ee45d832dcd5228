package proxy

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/payguard/payguard/internal/testutil"
	"github.com/payguard/payguard/receipts"
	"github.com/payguard/payguard/store/memory"
	"github.com/payguard/payguard/x402"
)

// The same signed authorization re-encoded (one leading space in the JSON) is the same payment: it must not
// reach the seller or reserve a second time.
func TestReplayOfReencodedAuthorizationRefused(t *testing.T) {
	s := newSeller(t, x402.V2, false, offer(x402.V2, "eip155:84532", baseSepoliaUSDC, sellerPayTo, cent))
	h := newHarness(t, memory.New(), testRules())
	ex := h.buyer().pay(s.url("/weather"), nil)
	if ex.paid.StatusCode != 200 {
		t.Fatalf("paid: %d %s", ex.paid.StatusCode, ex.paidBody)
	}
	doc, _ := base64.StdEncoding.DecodeString(ex.payment)
	again := base64.StdEncoding.EncodeToString(append([]byte(" "), doc...)) // same payment, same nonce
	resp, body := h.buyer().get(s.url("/weather"), http.Header{ex.header: {again}})
	b := h.budgetState()
	t.Logf("replay: status %d decision %q; seller saw %d payments; spent %d reserved %d; body %s",
		resp.StatusCode, resp.Header.Get(HeaderDecision), s.seen.Load(), b.SpentMicros, b.ReservedMicros, body)
	if s.seen.Load() != 1 {
		t.Errorf("replayed authorization reached the seller (%d payment requests)", s.seen.Load())
	}
	if b.ReservedMicros != 0 {
		t.Errorf("replay reserved budget a second time: reserved %d", b.ReservedMicros)
	}
}

// A v2 PAYMENT-REQUIRED header with a v1 body over 64 KiB: the body cannot be narrowed, so it must not reach
// a v1 client, which would pay an option the engine never saw (another asset) on the header's ticket.
func TestUnreadableV1BodyNextToHeaderIsNotPassedOn(t *testing.T) {
	const otherAsset = "0x3333333333333333333333333333333333333333"
	v2 := []x402.Requirement{offer(x402.V2, "eip155:84532", baseSepoliaUSDC, sellerPayTo, cent)}
	var got atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("/weather", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get(x402.HeaderXPayment) != "" {
			got.Add(1)
			w.Write([]byte(`{"ok":true}`))
			return
		}
		hv, _ := x402.EncodeHeaderJSON(&x402.PaymentRequired{X402Version: 2, Resource: &x402.ResourceInfo{URL: "http://" + r.Host + "/weather"}, Accepts: v2})
		body, _ := json.Marshal(map[string]any{
			"x402Version": 1, "error": "X-PAYMENT header is required",
			"accepts": []map[string]any{{"scheme": "exact", "network": "base-sepolia", "maxAmountRequired": cent,
				"asset": otherAsset, "payTo": sellerPayTo, "maxTimeoutSeconds": 60, "resource": "http://" + r.Host + "/weather"}},
			"padding": strings.Repeat("x", 70<<10),
		})
		w.Header().Set(x402.HeaderPaymentRequired, hv)
		w.WriteHeader(402)
		w.Write(body)
	})
	url := newRawServer(t, mux)
	h := newHarness(t, memory.New(), testRules())
	b := h.buyer()
	resp, body := b.get(url+"/weather", nil)
	var v1 struct {
		Accepts []struct{ Asset string } `json:"accepts"`
	}
	if err := json.Unmarshal(body, &v1); err != nil || resp.StatusCode != 402 {
		t.Fatalf("%d %v", resp.StatusCode, err)
	}
	if resp.Header.Get(HeaderDecision) != "allow" || len(v1.Accepts) != 0 {
		t.Errorf("decision %q; the v1 body a v1 client reads offers %+v, want nothing to pay", resp.Header.Get(HeaderDecision), v1.Accepts)
	}
	if got.Load() != 0 {
		t.Errorf("the seller was paid")
	}
}

// A payload with both an EIP-3009 authorization (a matching decoy) and a Permit2 authorization: for a Permit2
// option the facilitator settles the latter, which here pays another address 1e12 units of another token.
func TestDecoyEIP3009BesidePermit2Refused(t *testing.T) {
	s, paid, pbody := payPermit2(t, func(opt x402.Requirement, validBefore string) map[string]any {
		return map[string]any{
			"authorization": map[string]string{"from": buyerAddress, "to": opt.PayTo, "value": opt.Amount,
				"validAfter": "0", "validBefore": validBefore, "nonce": "0x" + strings.Repeat("ab", 32)},
			"permit2Authorization": map[string]any{
				"permitted": map[string]string{"token": "0x4444444444444444444444444444444444444444", "amount": "1000000000000"},
				"from":      buyerAddress, "spender": "0x4020615294c913F045dc10f0a5cdEbd86c280001",
				"nonce": "1", "deadline": validBefore, "witness": map[string]string{"to": otherPayTo, "validAfter": "0"}},
		}
	})
	decodeRefusal(t, paid, pbody)
	if s.seen.Load() != 0 {
		t.Errorf("a Permit2 authorization paying %s 1e12 units of another token reached the seller", otherPayTo)
	}
}

// payPermit2 gets a challenge for a Permit2 option through the proxy and pays it with the payload build
// makes (a zero signature is added), returning the seller and the proxy's answer.
func payPermit2(t *testing.T, build func(opt x402.Requirement, validBefore string) map[string]any) (*seller, *http.Response, []byte) {
	t.Helper()
	o := offer(x402.V2, "eip155:84532", baseSepoliaUSDC, sellerPayTo, cent)
	o.Extra = json.RawMessage(`{"name":"USDC","version":"2","assetTransferMethod":"permit2"}`)
	s := newSeller(t, x402.V2, false, o)
	h := newHarness(t, memory.New(), testRules())
	b := h.buyer()
	resp, body := b.get(s.url("/weather"), nil)
	pr := b.readChallenge(resp, body)
	opt := pr.Accepts[0]
	fields := build(opt, strconv.FormatInt(time.Now().Add(time.Minute).Unix(), 10))
	fields["signature"] = "0x" + hex.EncodeToString(make([]byte, 65))
	payload, _ := json.Marshal(fields)
	pl := &x402.PaymentPayload{X402Version: 2, Resource: pr.Resource, Accepted: &opt, Payload: payload}
	value, _ := x402.EncodeHeaderJSON(pl)
	paid, pbody := b.get(s.url("/weather"), http.Header{x402.HeaderPaymentSignature: {value}})
	return s, paid, pbody
}

// An approved hold whose amount no longer fits under the daily cap (spent meanwhile) is refused, but not as
// "a person denied this payment", and the receipt shown still matches its signature.
func TestApprovedHoldOverTheCapIsNotCalledDenied(t *testing.T) {
	rules := testRules()
	rules.DailyCapUSD = 750_000
	s := newSeller(t, x402.V2, false, offer(x402.V2, "eip155:84532", baseSepoliaUSDC, sellerPayTo, halfDollar))
	h := newHarness(t, memory.New(), rules, func(o *setup) { o.HoldWait = 10 * time.Minute })
	done := make(chan *http.Response, 1)
	go func() {
		resp, err := h.buyer().client.Get(s.url("/weather"))
		if err != nil {
			panic(err)
		}
		done <- resp
	}()
	testutil.Eventually(t, 10*time.Second, func() bool { return h.proxy.waiters.count() > 0 }, "the request parked on its hold")
	// Another payment takes the budget while the person looks at the hold.
	if _, err := h.store.Reserve(context.Background(), "default", h.proxy.day(), 500_000, 750_000); err != nil {
		t.Fatal(err)
	}
	id := h.holds("pending")[0].ID
	if code, out := h.api("POST", "/v1/holds/"+id+"/approve", testToken, map[string]string{"by": "alice"}); code != 200 {
		t.Fatalf("approve: %d %s", code, out)
	}
	resp := <-done
	body, _ := io.ReadAll(resp.Body)
	r := decodeRefusal(t, resp, body)
	t.Logf("refusal: %s", body)
	if r.Message == "payguard: a person denied this payment" {
		t.Errorf("alice approved, but the agent is told a person denied it (reasons %q, hold status %q)", r.Reasons, r.Hold.Status)
	}
	if r.Decision != "block" || len(r.Reasons) != 1 || !strings.Contains(r.Reasons[0], "daily cap") {
		t.Errorf("refusal %s, want a daily-cap block", body)
	}
	// No payment went, so the approval is not spent.
	if code, out := h.api("GET", "/v1/holds/"+id, testToken, nil); code != 200 || !strings.Contains(string(out), `"status":"approved"`) {
		t.Errorf("hold after the refusal: %d %s, want still approved", code, out)
	}
	jwks, _ := h.keys.PublicJWKS()
	_, claims, err := receipts.Verify(r.Receipt.JWS, jwks, receipts.VerifyOptions{})
	if err != nil || claims.Decision != r.Receipt.Decision {
		t.Errorf("receipt says %q but its JWS (%v) signs %+v", r.Receipt.Decision, err, claims)
	}
}

// A v1-only challenge body starting with a UTF-8 BOM (which fetch's response.json() strips) is a challenge
// like any other: here it is blocked (a sanctioned payTo), not passed on as "not x402".
func TestBOMPrefixedV1ChallengeIsGuarded(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/weather", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(402)
		w.Write([]byte("\xEF\xBB\xBF" + `{"x402Version":1,"error":"pay","accepts":[{"scheme":"exact","network":"base-sepolia","maxAmountRequired":"5000000","asset":"0x036CbD53842c5426634e7929541eC2318f3dCF7e","payTo":"` + sanctionedPayTo + `","maxTimeoutSeconds":60,"resource":"x"}]}`))
	})
	url := newRawServer(t, mux)
	h := newHarness(t, memory.New(), testRules())
	resp, body := h.buyer().get(url+"/weather", nil)
	// Refused (it is over max_per_payment_usd too); the challenge never reaches the agent.
	if r := decodeRefusal(t, resp, body); r.Decision != "block" {
		t.Errorf("refusal = %s, want a block", body)
	}
}

// A v1 challenge sent gzip-compressed (a seller with compression middleware) is judged like any other (Go's
// transport asked for gzip and undid it): here it is blocked (a sanctioned payTo).
func TestCompressedV1ChallengeIsGuarded(t *testing.T) {
	var asked atomic.Value
	mux := http.NewServeMux()
	mux.HandleFunc("/weather", func(w http.ResponseWriter, r *http.Request) {
		asked.Store(r.Header.Get("Accept-Encoding"))
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		zw.Write([]byte(`{"x402Version":1,"error":"pay","accepts":[{"scheme":"exact","network":"base-sepolia","maxAmountRequired":"5000","asset":"` + baseSepoliaUSDC + `","payTo":"` + sanctionedPayTo + `","maxTimeoutSeconds":60,"resource":"x"}]}`))
		zw.Close()
		w.Header().Set("Content-Encoding", "gzip")
		w.WriteHeader(402)
		w.Write(buf.Bytes())
	})
	url := newRawServer(t, mux)
	h := newHarness(t, memory.New(), testRules())
	req, _ := http.NewRequest(http.MethodGet, url+"/weather", nil)
	req.Header.Set("Accept-Encoding", "gzip, deflate, br, zstd")
	resp, err := h.buyer().client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	r := decodeRefusal(t, resp, body)
	if r.Decision != "block" || !strings.Contains(strings.Join(r.Reasons, " "), "SDN") {
		t.Errorf("refusal = %s, want a sanctions block", body)
	}
	if got := asked.Load(); got != "gzip" {
		t.Errorf("the seller was asked for Accept-Encoding %q, want gzip (the agent's br and zstd dropped)", got)
	}
}

// A 402 body in a coding payguard does not read (the seller ignored Accept-Encoding) is refused unread: it
// may be a challenge.
func TestUnreadableCodingIsRefused(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/weather", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Encoding", "br")
		w.WriteHeader(402)
		w.Write([]byte{0x1b, 0x2f, 0x00, 0x00})
	})
	url := newRawServer(t, mux)
	h := newHarness(t, memory.New(), testRules())
	resp, body := h.buyer().get(url+"/weather", nil)
	r := decodeRefusal(t, resp, body)
	if r.Decision != "block" || !strings.Contains(strings.Join(r.Reasons, " "), "content coding") {
		t.Errorf("refusal = %s", body)
	}
}

// A Permit2 authorization must move the asset the payment names (v2) or the ticket allowed.
func TestPermit2ForAnotherTokenRefused(t *testing.T) {
	s, paid, pbody := payPermit2(t, func(opt x402.Requirement, validBefore string) map[string]any {
		return map[string]any{"permit2Authorization": map[string]any{
			"permitted": map[string]string{"token": "0x4444444444444444444444444444444444444444", "amount": opt.Amount},
			"from":      buyerAddress, "spender": "0x4020615294c913F045dc10f0a5cdEbd86c280001",
			"nonce": "7", "deadline": validBefore, "witness": map[string]string{"to": opt.PayTo, "validAfter": "0"}}}
	})
	r := decodeRefusal(t, paid, pbody)
	if !strings.Contains(strings.Join(r.Reasons, " "), "Permit2") || s.seen.Load() != 0 {
		t.Errorf("refusal %s; seller saw %d payments", pbody, s.seen.Load())
	}
}

// A payment sent as a request trailer arrives after the body, when the request is already on its way to the
// seller: the proxy never checked it. A declared payment trailer is refused; an undeclared one (any trailer)
// is not passed upstream.
func TestPaymentInTrailerNeverReachesSeller(t *testing.T) {
	for _, useTLS := range []bool{false, true} {
		var mu sync.Mutex
		var got http.Header
		seller := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			mu.Lock()
			got = r.Trailer.Clone()
			mu.Unlock()
		})
		srv := httptest.NewServer(seller)
		if useTLS {
			srv.Close()
			srv = httptest.NewTLSServer(seller)
		}
		t.Cleanup(srv.Close)
		h := newHarness(t, memory.New(), testRules(), func(o *setup) {
			if useTLS {
				pool := x509.NewCertPool()
				pool.AddCert(srv.Certificate())
				o.UpstreamRoots = pool
			}
		})
		b := h.buyer()
		pr := &x402.PaymentRequired{X402Version: x402.V2, Resource: &x402.ResourceInfo{URL: srv.URL + "/pay"},
			Accepts: []x402.Requirement{offer(x402.V2, "eip155:84532", baseSepoliaUSDC, sellerPayTo, fiveDollar)}}
		name, value := b.sign(pr, 0, nil)
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/pay", io.MultiReader(strings.NewReader("x")))
		req.ContentLength = -1
		req.Trailer = http.Header{name: {value}}
		resp, err := b.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		decodeRefusal(t, resp, body)
		mu.Lock()
		if got.Get(name) != "" {
			t.Errorf("tls=%v: a payment trailer reached the seller", useTLS)
		}
		mu.Unlock()
	}

	// Undeclared: the agent declares another trailer and sends the payment in the trailer section anyway.
	var mu sync.Mutex
	var got http.Header
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		mu.Lock()
		got = r.Trailer.Clone()
		mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	h := newHarness(t, memory.New(), testRules())
	conn, err := net.Dial("tcp", strings.TrimPrefix(h.srv.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	fmt.Fprintf(conn, "POST %s/pay HTTP/1.1\r\nHost: %s\r\nTransfer-Encoding: chunked\r\nTrailer: X-Other\r\n\r\n1\r\nx\r\n0\r\nX-Other: 1\r\nPAYMENT-SIGNATURE: eyJ4NDAyVmVyc2lvbiI6Mn0=\r\n\r\n", srv.URL, host)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	mu.Lock()
	defer mu.Unlock()
	if got.Get("Payment-Signature") != "" || got.Get("X-Other") != "" {
		t.Errorf("trailers reached the seller: %v (status %d)", got, resp.StatusCode)
	}
}

// An approval must be one JSON object and name someone visible: trailing values and names made only of
// control or format characters (NUL, U+200B, U+FEFF) resolve nothing.
func TestApprovalBodyMustBeOneObjectNamingSomeone(t *testing.T) {
	s := newSeller(t, x402.V2, false, offer(x402.V2, "eip155:84532", baseSepoliaUSDC, sellerPayTo, halfDollar))
	h := newHarness(t, memory.New(), testRules())
	resp, _ := h.buyer().get(s.url("/weather"), nil)
	id := resp.Header.Get(HeaderHold)
	if id == "" {
		t.Fatal("no hold")
	}
	post := func(body string) int {
		req, _ := http.NewRequest(http.MethodPost, h.admin.URL+"/v1/holds/"+id+"/approve", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+testToken)
		r, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		r.Body.Close()
		return r.StatusCode
	}
	for _, body := range []string{
		`{"by":"alice"} {"by":"mallory","note":"x"} not json at all`,
		`{"by":"alice"}{}`,
		`{"by":"\u0000"}`, `{"by":"\u200b"}`, `{"by":"\u0007\u0008"}`, `{"by":"\u2060\ufeff"}`, `{"by":" "}`,
	} {
		if code := post(body); code != http.StatusBadRequest {
			t.Errorf("%s: %d, want 400", body, code)
		}
	}
	if p := h.holds("pending"); len(p) != 1 {
		t.Fatalf("the hold was resolved by a refused body: pending %+v", p)
	}
	if code := post(`{"by":"alice","note":"ok"}` + "\n"); code != http.StatusOK {
		t.Errorf("a good approval: %d", code)
	}
}

// The echoed `accepted` must honour the allowed option as the SDK seller judges it: it may add to extra,
// not drop from it.
func TestTicketAcceptedComparedAsTheSellerDoes(t *testing.T) {
	s := newSeller(t, x402.V2, false, offer(x402.V2, "eip155:84532", baseSepoliaUSDC, sellerPayTo, cent))
	h := newHarness(t, memory.New(), testRules())
	ex := h.buyer().pay(s.url("/weather"), func(pl *x402.PaymentPayload, _ *x402.EIP3009Authorization) {
		pl.Accepted.Extra = nil
	})
	if r := decodeRefusal(t, ex.paid, ex.paidBody); !strings.Contains(strings.Join(r.Reasons, " "), "accepted option differs") {
		t.Errorf("accepted without extra: %s", ex.paidBody)
	}
	ex = h.buyer().pay(s.url("/weather"), func(pl *x402.PaymentPayload, _ *x402.EIP3009Authorization) {
		pl.Accepted.Extra = json.RawMessage(`{"name":"USDC","version":"2","memo":"added by the client"}`)
	})
	if ex.paid.StatusCode == http.StatusForbidden || ex.paid.Header.Get(HeaderDecision) != "allow" {
		t.Errorf("accepted with extra added: %d %s", ex.paid.StatusCode, ex.paidBody)
	}
}
