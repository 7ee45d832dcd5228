package server

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/payguard/payguard/server/core"
	"github.com/payguard/payguard/store"
)

const preflightBody = `{"challenge":{"x402Version":1,"error":"pay","accepts":[]}}`

func TestCheckNoInputIs400AndFacilitatorSeesNothing(t *testing.T) {
	e := newEnv(t)
	ch := challengeV2(t, e.do("GET", "/v1/check?name=x", nil, nil))
	for _, path := range []string{"/v1/check", "/v1/check?name=", "/v1/check?trial=1"} {
		r := e.do("GET", path, nil, payV2(t, ch, "0x01"))
		if r.StatusCode != 400 || r.errCode(t) != core.CodeMissingInput {
			t.Fatalf("%s: %d %s", path, r.StatusCode, r.body)
		}
	}
	if e.fac.Verifies.Load()+e.fac.Settles.Load() != 0 || e.checker.calls.Load() != 0 {
		t.Fatalf("bad request reached the facilitator or the checker")
	}
}

func TestCheckInputErrors(t *testing.T) {
	e := newEnv(t)
	cases := map[string]string{
		"/v1/check?name=a&trial=2":                      core.CodeInvalidTrial,
		"/v1/check?name=a&trial=":                       core.CodeInvalidTrial,
		"/v1/check?name=a&trial=1&trial=1":              core.CodeInvalidParameter,
		"/v1/check?name=" + strings.Repeat("n", 257):    core.CodeInvalidParameter,
		"/v1/check?name=%ff":                            core.CodeInvalidParameter,
		"/v1/check?name=%zz":                            core.CodeInvalidParameter,
		"/v1/check?address=" + strings.Repeat("0", 257): core.CodeInvalidParameter,
		"/v1/check?domain=bad%20domain":                 core.CodeInvalidParameter,
	}
	for path, code := range cases {
		r := e.do("GET", path, nil, nil)
		if r.StatusCode != 400 || r.errCode(t) != code {
			t.Errorf("%s: %d %s, want 400 %s", path, r.StatusCode, r.body, code)
		}
	}
}

func TestChallengeCarriesV2HeaderAndV1Body(t *testing.T) {
	e := newEnv(t)
	r := e.do("GET", "/v1/check?address=0xabc", nil, nil)
	v2 := challengeV2(t, r)
	acc := v2["accepts"].([]any)[0].(map[string]any)
	if v2["x402Version"].(float64) != 2 || acc["amount"] != "10000" || acc["network"] != "eip155:84532" ||
		acc["asset"] != testAsset || acc["payTo"] != testPayTo || acc["scheme"] != "exact" {
		t.Fatalf("v2 challenge: %v", v2)
	}
	if res := v2["resource"].(map[string]any); res["url"] != e.http.URL+"/v1/check" {
		t.Fatalf("resource %v", res)
	}
	ext, _ := v2["extensions"].(map[string]any)
	if _, ok := ext["offer-receipt"]; ok {
		t.Fatal("offer-receipt on /v1/check")
	}
	bazaar, _ := ext["bazaar"].(map[string]any)
	if in := bazaar["info"].(map[string]any)["input"].(map[string]any); in["method"] != "GET" || in["queryParams"] == nil || bazaar["schema"] == nil {
		t.Fatalf("bazaar %v", bazaar)
	}
	v1 := r.json(t)
	a1 := v1["accepts"].([]any)[0].(map[string]any)
	if v1["x402Version"].(float64) != 1 || a1["maxAmountRequired"] != "10000" || a1["network"] != "base-sepolia" ||
		a1["resource"] != e.http.URL+"/v1/check" || a1["mimeType"] != "application/json" || a1["description"] == "" ||
		a1["outputSchema"] == nil || a1["extra"].(map[string]any)["name"] != "USDC" || v1["data_as_of"] != "2026-11-21T00:00:00Z" {
		t.Fatalf("v1 body: %s", r.body)
	}
	// Prices per route.
	for path, amount := range map[string]string{"/v1/preflight": "20000"} {
		r := e.do("POST", path, []byte(preflightBody), nil)
		if got := challengeV2(t, r)["accepts"].([]any)[0].(map[string]any)["amount"]; got != amount {
			t.Errorf("%s amount %v", path, got)
		}
	}
}

func TestPaidCheckV2AllowsAndSettlesOnce(t *testing.T) {
	e := newEnv(t)
	ch := challengeV2(t, e.do("GET", "/v1/check?address=0xabc", nil, nil))
	pay := payV2(t, ch, "0x01")
	r := e.do("GET", "/v1/check?address=0xabc", nil, pay)
	if r.StatusCode != 200 {
		t.Fatalf("%d %s", r.StatusCode, r.body)
	}
	s := decodeSettle(t, r.Header.Get("PAYMENT-RESPONSE"))
	if s["success"] != true || s["transaction"] != "0xabc" || r.Header.Get("Cache-Control") != "private" {
		t.Fatalf("settlement %v", s)
	}
	if r.json(t)["risk"] != "low" || e.fac.Verifies.Load() != 1 || e.fac.Settles.Load() != 1 {
		t.Fatalf("verifies %d settles %d", e.fac.Verifies.Load(), e.fac.Settles.Load())
	}
	// The facilitator got our own requirement and the client's payload verbatim.
	var sent map[string]any
	json.Unmarshal(e.fac.LastSettle(), &sent)
	if sent["x402Version"].(float64) != 2 || sent["paymentRequirements"].(map[string]any)["amount"] != "10000" {
		t.Fatalf("settle request %v", sent)
	}
	// The same payment again for the same question (a buyer that lost the answer): the kept result and its
	// settlement, without the facilitator or the work: never settled twice, never worked twice.
	again := e.do("GET", "/v1/check?address=0xabc", nil, pay)
	if again.StatusCode != 200 || string(again.body) != string(r.body) || again.Header.Get("PAYMENT-RESPONSE") != r.Header.Get("PAYMENT-RESPONSE") ||
		e.fac.Settles.Load() != 1 || e.fac.Verifies.Load() != 1 || e.checker.calls.Load() != 1 {
		t.Fatalf("retry: %d %s verifies %d settles %d checks %d", again.StatusCode, again.body, e.fac.Verifies.Load(),
			e.fac.Settles.Load(), e.checker.calls.Load())
	}
	// The same payment for another question: refused before the facilitator sees it, no work.
	r = e.do("GET", "/v1/check?address=0xdef", nil, pay)
	if r.StatusCode != 402 || r.json(t)["error"] != "invalid_exact_evm_nonce_already_used" || e.fac.Settles.Load() != 1 ||
		e.fac.Verifies.Load() != 1 || e.checker.calls.Load() != 1 {
		t.Fatalf("replay: %d %s verifies %d settles %d", r.StatusCode, r.body, e.fac.Verifies.Load(), e.fac.Settles.Load())
	}
}

func TestPaidV1Payment(t *testing.T) {
	e := newEnv(t)
	r := e.do("GET", "/v1/check?name=acme", nil, payV1(t, "0x02"))
	if r.StatusCode != 200 || r.Header.Get("X-PAYMENT-RESPONSE") == "" || r.Header.Get("PAYMENT-RESPONSE") != "" {
		t.Fatalf("%d %v %s", r.StatusCode, r.Header, r.body)
	}
	var sent map[string]any
	json.Unmarshal(e.fac.LastSettle(), &sent)
	req := sent["paymentRequirements"].(map[string]any)
	if sent["x402Version"].(float64) != 1 || req["maxAmountRequired"] != "10000" || req["network"] != "base-sepolia" {
		t.Fatalf("v1 settle request %v", sent)
	}
}

func TestPaymentNotMatchingIs402WithoutVerify(t *testing.T) {
	e := newEnv(t)
	ch := challengeV2(t, e.do("GET", "/v1/check?address=0xabc", nil, nil))
	ch["accepts"].([]any)[0].(map[string]any)["amount"] = "1"
	r := e.do("GET", "/v1/check?address=0xabc", nil, payV2(t, ch, "0x03"))
	if r.StatusCode != 402 || r.json(t)["error"] != "invalid_payment_requirements" || e.fac.Verifies.Load() != 0 {
		t.Fatalf("%d %s", r.StatusCode, r.body)
	}
	r = e.do("GET", "/v1/check?address=0xabc", nil, map[string]string{"PAYMENT-SIGNATURE": "%%%"})
	if r.StatusCode != 402 || r.json(t)["error"] != "invalid_payload" {
		t.Fatalf("%d %s", r.StatusCode, r.body)
	}
	// A check-priced payment cannot buy a preflight.
	r = e.do("POST", "/v1/preflight", []byte(preflightBody), payV2(t, challengeV2(t, e.do("GET", "/v1/check?name=a", nil, nil)), "0x04"))
	if r.StatusCode != 402 || e.fac.Verifies.Load() != 0 {
		t.Fatalf("%d %s", r.StatusCode, r.body)
	}
}

func TestInvalidPaymentIs402WithInvalidReason(t *testing.T) {
	e := newEnv(t)
	e.fac.VerifyMode.Store("invalid")
	ch := challengeV2(t, e.do("GET", "/v1/check?address=0xabc", nil, nil))
	r := e.do("GET", "/v1/check?address=0xabc", nil, payV2(t, ch, "0x05"))
	if challengeV2(t, r)["error"] != "invalid_exact_evm_payload_signature" || r.json(t)["error"] != "invalid_exact_evm_payload_signature" {
		t.Fatalf("%s", r.body)
	}
	if e.fac.Settles.Load() != 0 || e.checker.calls.Load() != 0 {
		t.Fatal("invalid payment reached settle or the work")
	}
}

func TestFacilitatorOutageIs503AndNeverSettles(t *testing.T) {
	for _, mode := range []string{"5xx", "down"} {
		t.Run(mode, func(t *testing.T) {
			e := newEnv(t)
			ch := challengeV2(t, e.do("GET", "/v1/check?address=0xabc", nil, nil))
			if mode == "down" {
				e.fac.Srv.Close()
			} else {
				e.fac.VerifyMode.Store("5xx")
			}
			r := e.do("GET", "/v1/check?address=0xabc", nil, payV2(t, ch, "0x06"))
			if r.StatusCode != 503 || r.errCode(t) != core.CodeFacilitatorUnavailable || e.fac.Settles.Load() != 0 || e.checker.calls.Load() != 0 {
				t.Fatalf("%d %s settles %d", r.StatusCode, r.body, e.fac.Settles.Load())
			}
		})
	}
}

func TestSettleOutcomeUnknownIsNeverRetried(t *testing.T) {
	for _, mode := range []string{"5xx", "garbage", "reset"} {
		t.Run(mode, func(t *testing.T) {
			e := newEnv(t)
			e.fac.SettleMode.Store(mode)
			ch := challengeV2(t, e.do("GET", "/v1/check?address=0xabc", nil, nil))
			pay := payV2(t, ch, "0x07")
			r := e.do("GET", "/v1/check?address=0xabc", nil, pay)
			if r.StatusCode != core.StatusSettlementOutcomeUnknown || r.errCode(t) != core.CodeSettlementOutcomeUnknown {
				t.Fatalf("%d %s", r.StatusCode, r.body)
			}
			if r.json(t)["error"].(map[string]any)["nonce"] != "0x07" || e.fac.Settles.Load() != 1 {
				t.Fatalf("nonce missing or settle retried: %s settles %d", r.body, e.fac.Settles.Load())
			}
			// The same payment again is never sent to /settle a second time, and gets no result: the outcome
			// is still unknown.
			e.fac.SettleMode.Store("success")
			r = e.do("GET", "/v1/check?address=0xabc", nil, pay)
			if r.StatusCode != core.StatusSettlementOutcomeUnknown || r.errCode(t) != core.CodeSettlementOutcomeUnknown ||
				r.json(t)["error"].(map[string]any)["nonce"] != "0x07" || e.fac.Settles.Load() != 1 || e.checker.calls.Load() != 1 {
				t.Fatalf("second attempt: %d %s settles %d", r.StatusCode, r.body, e.fac.Settles.Load())
			}
		})
	}
}

func TestSettleFailureIs402WithPaymentResponse(t *testing.T) {
	e := newEnv(t)
	e.fac.SettleMode.Store("fail")
	ch := challengeV2(t, e.do("GET", "/v1/check?address=0xabc", nil, nil))
	r := e.do("GET", "/v1/check?address=0xabc", nil, payV2(t, ch, "0x08"))
	if r.StatusCode != 402 || r.Header.Get("PAYMENT-REQUIRED") != "" {
		t.Fatalf("%d %v", r.StatusCode, r.Header)
	}
	s := decodeSettle(t, r.Header.Get("PAYMENT-RESPONSE"))
	if s["success"] != false || s["errorReason"] != "insufficient_funds" || r.json(t)["error"] != "insufficient_funds" {
		t.Fatalf("%v %s", s, r.body)
	}
}

func TestPreflightPaidOfferAndReceipt(t *testing.T) {
	e := newEnv(t)
	r := e.do("POST", "/v1/preflight", []byte(preflightBody), nil)
	ch := challengeV2(t, r)
	ext := ch["extensions"].(map[string]any)["offer-receipt"].(map[string]any)
	offers := ext["info"].(map[string]any)["offers"].([]any)
	if len(offers) != 1 || ext["schema"] == nil {
		t.Fatalf("offers %v", ext)
	}
	offer := offers[0].(map[string]any)
	if offer["format"] != "jws" || offer["acceptIndex"].(float64) != 0 {
		t.Fatalf("offer %v", offer)
	}
	payload := e.signer.verifyJWS(t, offer["signature"].(string))
	want := `{"amount":"20000","asset":"` + testAsset + `","network":"eip155:84532","payTo":"` + testPayTo +
		`","resourceUrl":"` + e.http.URL + `/v1/preflight","scheme":"exact","validUntil":` + jsonInt(testNow.Unix()+60) + `,"version":1}`
	if string(payload) != want {
		t.Fatalf("offer payload\n got %s\nwant %s", payload, want)
	}

	r = e.do("POST", "/v1/preflight", []byte(`{"cart":{"merchant_domain":"example.com","total_usd":0.5}}`), payV2(t, ch, "0x09"))
	if r.StatusCode != 200 || r.json(t)["decision"] != "hold" {
		t.Fatalf("hold is a delivered, charged result: %d %s", r.StatusCode, r.body)
	}
	s := decodeSettle(t, r.Header.Get("PAYMENT-RESPONSE"))
	rec := s["extensions"].(map[string]any)["offer-receipt"].(map[string]any)["info"].(map[string]any)["receipt"].(map[string]any)
	rp := e.signer.verifyJWS(t, rec["signature"].(string))
	wantR := `{"issuedAt":` + jsonInt(testNow.Unix()) + `,"network":"eip155:84532","payer":"` + testPayer + `","resourceUrl":"` +
		e.http.URL + `/v1/preflight","transaction":"","version":1}`
	if rec["format"] != "jws" || string(rp) != wantR {
		t.Fatalf("receipt payload %s", rp)
	}
	if e.fac.Settles.Load() != 1 {
		t.Fatal("not settled")
	}
}

func jsonInt(n int64) string { b, _ := json.Marshal(n); return string(b) }

func TestSigningUnavailableIs503AndNeverSettles(t *testing.T) {
	e := newEnv(t)
	ch := challengeV2(t, e.do("POST", "/v1/preflight", []byte(preflightBody), nil))
	e.signer.fail.Store(true)
	r := e.do("POST", "/v1/preflight", []byte(preflightBody), payV2(t, ch, "0x0a"))
	if r.StatusCode != 503 || r.errCode(t) != core.CodeReceiptSigning || e.fac.Settles.Load() != 0 {
		t.Fatalf("%d %s", r.StatusCode, r.body)
	}
	// Without a key there is no signed offer either: 503 instead of an unsigned 402.
	r = e.do("POST", "/v1/preflight", []byte(preflightBody), nil)
	if r.StatusCode != 503 || r.errCode(t) != core.CodeReceiptSigning {
		t.Fatalf("%d %s", r.StatusCode, r.body)
	}
}

func TestSanctionsUnavailableIs503BeforePayment(t *testing.T) {
	e := newEnv(t)
	ch := challengeV2(t, e.do("GET", "/v1/check?name=a", nil, nil))
	e.sanctions.ready.Store(false)
	r := e.do("GET", "/v1/check?name=a", nil, payV2(t, ch, "0x0b"))
	if r.StatusCode != 503 || r.errCode(t) != core.CodeSanctionsUnavailable || e.fac.Verifies.Load() != 0 {
		t.Fatalf("%d %s", r.StatusCode, r.body)
	}
	if r.json(t)["data_as_of"] != "1970-01-01T00:00:00Z" {
		t.Fatalf("data_as_of %s", r.body)
	}
}

func TestTrialFourthCallIs402(t *testing.T) {
	e := newEnv(t)
	for i := 1; i <= 3; i++ {
		r := e.do("GET", "/v1/check?name=a&trial=1", nil, nil)
		if r.StatusCode != 200 || r.Header.Get("X-Trial-Remaining") != jsonInt(int64(3-i)) {
			t.Fatalf("trial call %d: %d %v", i, r.StatusCode, r.Header)
		}
	}
	// Preflight shares the counter.
	r := e.do("POST", "/v1/preflight?trial=1", []byte(preflightBody), nil)
	ch := challengeV2(t, r)
	body := r.json(t)
	tr, _ := body["trial"].(map[string]any)
	if tr == nil || tr["exhausted"] != true || body["error"] != "trial_exhausted" || ch["error"] != "trial_exhausted" {
		t.Fatalf("exhausted trial: %s", r.body)
	}
	if e.fac.Verifies.Load() != 0 || e.preflight.calls.Load() != 0 {
		t.Fatal("exhausted trial did work or touched the facilitator")
	}
	// Another client (through a trusted proxy? no: a different socket address is not possible here) — the
	// bad request is still 400 before the trial is counted.
	if r := e.do("GET", "/v1/check?trial=1", nil, nil); r.StatusCode != 400 {
		t.Fatalf("%d", r.StatusCode)
	}
}

func TestTrialDecisionCarriesOnlyDecisionJWS(t *testing.T) {
	e := newEnv(t)
	r := e.do("POST", "/v1/preflight?trial=1", []byte(preflightBody), nil)
	if r.StatusCode != 200 || r.Header.Get("PAYMENT-RESPONSE") != "" {
		t.Fatalf("%d %v", r.StatusCode, r.Header)
	}
	jws := r.json(t)["receipt"].(map[string]any)["jws"].(string)
	e.signer.verifyJWS(t, jws)
}

func TestTrialStoreDownIs503(t *testing.T) {
	e := newEnv(t)
	e.trial.fail = true
	r := e.do("GET", "/v1/check?name=a&trial=1", nil, nil)
	if r.StatusCode != 503 || r.errCode(t) != core.CodeTrialUnavailable || e.checker.calls.Load() != 0 {
		t.Fatalf("%d %s", r.StatusCode, r.body)
	}
}

func TestPreflightLimits(t *testing.T) {
	e := newEnv(t)
	ch := challengeV2(t, e.do("POST", "/v1/preflight", []byte(preflightBody), nil))
	pay := payV2(t, ch, "0x0c")
	deep := strings.Repeat("[", 40) + strings.Repeat("]", 40)
	cases := []struct {
		body   []byte
		status int
		code   string
	}{
		{nil, 400, core.CodeMissingBody},
		{[]byte("{"), 400, core.CodeInvalidJSON},
		{[]byte(`{"challenge":` + deep + `}`), 400, "too_deep"},
		{bytes.Repeat([]byte(" "), core.MaxBodyBytes+1), 413, core.CodeBodyTooLarge},
	}
	for _, c := range cases {
		r := e.do("POST", "/v1/preflight", c.body, pay)
		if r.StatusCode != c.status || r.errCode(t) != c.code {
			t.Errorf("body %.20q: %d %s, want %d %s", c.body, r.StatusCode, r.body, c.status, c.code)
		}
	}
	if e.fac.Verifies.Load() != 0 || e.preflight.calls.Load() != 0 {
		t.Fatal("bad input reached the facilitator or the engine")
	}
	if r := e.do("POST", "/v1/preflight?trial=yes", []byte(preflightBody), nil); r.StatusCode != 400 || r.errCode(t) != core.CodeInvalidTrial {
		t.Fatalf("%d %s", r.StatusCode, r.body)
	}
}

// TestBodyOverLimitWithLyingContentLength sends more bytes than Content-Length claims is impossible over
// HTTP/1.1 framing; instead a chunked body (no Content-Length) over the limit must still be 413.
func TestChunkedBodyOverLimitIs413(t *testing.T) {
	e := newEnv(t)
	pr := strings.NewReader(strings.Repeat("x", core.MaxBodyBytes+10))
	req, _ := http.NewRequest("POST", e.http.URL+"/v1/preflight", struct{ *strings.Reader }{pr})
	req.ContentLength = -1
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 413 || len(req.TransferEncoding) > 0 && req.TransferEncoding[0] != "chunked" {
		t.Fatalf("%d", resp.StatusCode)
	}
}

func TestSlowBodyIs408(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for the 10 s body deadline")
	}
	e := newEnv(t)
	conn, err := net.Dial("tcp", e.http.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.Write([]byte("POST /v1/preflight HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"cha"))
	conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	resp, err := http.ReadResponse(bufioReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	var body map[string]any
	json.NewDecoder(resp.Body).Decode(&body)
	if resp.StatusCode != 408 || body["error"].(map[string]any)["code"] != core.CodeBodyTimeout {
		t.Fatalf("%d %v", resp.StatusCode, body)
	}
}

func TestWrongMethodIs405WithAllow(t *testing.T) {
	e := newEnv(t)
	for path, allow := range map[string]string{"/v1/check": "GET", "/v1/preflight": "POST", "/v1/endpoint": "GET", "/health": "GET", "/openapi.json": "GET"} {
		method := "DELETE"
		r := e.do(method, path, nil, nil)
		if r.StatusCode != 405 || r.Header.Get("Allow") != allow || r.errCode(t) != core.CodeMethodNotAllowed {
			t.Errorf("%s %s: %d allow %q", method, path, r.StatusCode, r.Header.Get("Allow"))
		}
	}
	if r := e.do("GET", "/v1/preflight", nil, nil); r.StatusCode != 405 {
		t.Fatalf("GET preflight: %d", r.StatusCode)
	}
	if r := e.do("GET", "/nope", nil, nil); r.StatusCode != 404 || r.errCode(t) != core.CodeNotFound {
		t.Fatalf("unknown path: %d", r.StatusCode)
	}
}

func TestEndpointIndex(t *testing.T) {
	e := newEnv(t)
	one, two := "https://api.example.com/one", "https://api.example.com/two"
	e.endpoints.obs[one] = []store.Observation{{URL: one, Method: "GET", ObservedAt: testNow.Add(-time.Hour), Status: 402, Usable: true,
		Challenge: []byte(`{"x402Version":2,"accepts":[]}`)}}
	e.endpoints.obs[two] = []store.Observation{{URL: two, Method: "GET", ObservedAt: testNow, Status: 402, Usable: true},
		{URL: two, Method: "POST", ObservedAt: testNow, Status: 500}}
	cases := []struct {
		query  string
		status int
		code   string
	}{
		{"", 400, core.CodeInvalidURL},
		{"?url=ftp://x/y", 400, core.CodeInvalidURL},
		{"?url=notaurl", 400, core.CodeInvalidURL},
		{"?url=" + one + "&method=FETCH", 400, core.CodeInvalidMethod},
		{"?url=https://api.example.com/none", 404, core.CodeEndpointNotListed},
		{"?url=" + one + "&method=POST", 404, core.CodeEndpointNotListed},
		{"?url=" + two, 409, core.CodeMethodRequired},
		{"?url=" + one + "&trial=1", 400, core.CodeInvalidTrial},
	}
	for _, c := range cases {
		r := e.do("GET", "/v1/endpoint"+c.query, nil, nil)
		if r.StatusCode != c.status || r.errCode(t) != c.code {
			t.Errorf("%s: %d %s, want %d %s", c.query, r.StatusCode, r.body, c.status, c.code)
		}
	}
	r := e.do("GET", "/v1/endpoint?url="+two+"&method=post", nil, nil)
	if got := challengeV2(t, r)["accepts"].([]any)[0].(map[string]any)["amount"]; got != "5000" {
		t.Fatalf("amount %v", got)
	}
	// Another spelling of "one" is its key (index.NormalizeURL, the Index's one key function).
	r = e.do("GET", "/v1/endpoint?url="+url.QueryEscape("HTTPS://API.example.com.:443/One/"), nil, payV2(t, challengeV2(t, r), "0x0d"))
	if r.StatusCode != 200 {
		t.Fatalf("%d %s", r.StatusCode, r.body)
	}
	obs := r.json(t)["observations"].([]any)
	if len(obs) != 1 || obs[0].(map[string]any)["challenge"].(map[string]any)["x402Version"].(float64) != 2 {
		t.Fatalf("%s", r.body)
	}
	if e.fac.Settles.Load() != 1 || e.fac.Verifies.Load() != 1 {
		t.Fatal("errors were charged or success not settled")
	}
}

func TestEndpointIndexStaleIs503BeforePayment(t *testing.T) {
	e := newEnv(t)
	e.endpoints.obs["https://a.example/x"] = []store.Observation{{URL: "https://a.example/x", Method: "GET", ObservedAt: testNow}}
	for _, updated := range []time.Time{{}, testNow.Add(-25 * time.Hour)} {
		e.endpoints.updated = updated
		r := e.do("GET", "/v1/endpoint?url=https://a.example/x", nil, payV1(t, "0x0e"))
		if r.StatusCode != 503 || r.errCode(t) != core.CodeIndexUnavailable || e.fac.Verifies.Load() != 0 {
			t.Fatalf("%v: %d %s", updated, r.StatusCode, r.body)
		}
	}
}

func TestSettlementHeaderIsStandardBase64(t *testing.T) {
	e := newEnv(t)
	r := e.do("GET", "/v1/check?name=a", nil, payV1(t, "0x0f"))
	if _, err := base64.StdEncoding.Strict().DecodeString(r.Header.Get("X-PAYMENT-RESPONSE")); err != nil {
		t.Fatal(err)
	}
}

// A replay of a settled payment with a decoy "Nonce" member next to the real "nonce" (encoding/json would
// match either name) is the same authorization: it never reaches /settle again.
func TestReplayWithDecoyNonceMemberRefused(t *testing.T) {
	e := newEnv(t)
	ch := challengeV2(t, e.do("GET", "/v1/check?address=0xabc", nil, nil))
	pay := payV2(t, ch, "0x01")
	if r := e.do("GET", "/v1/check?address=0xabc", nil, pay); r.StatusCode != 200 {
		t.Fatalf("first: %d %s", r.StatusCode, r.body)
	}
	raw, _ := base64.StdEncoding.DecodeString(pay["PAYMENT-SIGNATURE"])
	replay := strings.Replace(string(raw), `"nonce":"0x01"`, `"nonce":"0x01","Nonce":"0xdecoy"`, 1)
	r := e.do("GET", "/v1/check?address=0xabc", nil,
		map[string]string{"PAYMENT-SIGNATURE": base64.StdEncoding.EncodeToString([]byte(replay))})
	if e.fac.Settles.Load() != 1 || r.StatusCode == 200 {
		t.Fatalf("authorization nonce 0x01 reached /settle %d times; the replay was answered %d", e.fac.Settles.Load(), r.StatusCode)
	}
}
