package server

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/payguard/payguard/config"
	"github.com/payguard/payguard/internal/logbuf"
	"github.com/payguard/payguard/policy"
	"github.com/payguard/payguard/preflight"
	"github.com/payguard/payguard/receipts"
	"github.com/payguard/payguard/server/core"
	"github.com/payguard/payguard/server/fees"
	"github.com/payguard/payguard/server/internal/factest"
	"github.com/payguard/payguard/server/trial"
	"github.com/payguard/payguard/store"
	"github.com/payguard/payguard/store/memory"
)

// Test terms: Base Sepolia USDC, as the interop facilitator uses.
const (
	testAsset = "0x036CbD53842c5426634e7929541eC2318f3dCF7e"
	testPayTo = "0xf54127927F219FB78C8D1A1fF3D7dc6D7f70C98E"
	testPayer = "0xf9A721373C534a2d7dbAad7b5bDF25BED26B51c1"
)

var testNow = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

// testSigner is an ES256 signer with a kid, like receipts.KeySet.
type testSigner struct {
	key  *ecdsa.PrivateKey
	fail atomic.Bool
}

func newTestSigner(t *testing.T) *testSigner {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return &testSigner{key: k}
}

func (s *testSigner) Sign(payload []byte) (string, error) {
	if s.fail.Load() {
		return "", errors.New("key unavailable")
	}
	sig, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: jose.JSONWebKey{Key: s.key, KeyID: "test-kid"}}, nil)
	if err != nil {
		return "", err
	}
	obj, err := sig.Sign(payload)
	if err != nil {
		return "", err
	}
	return obj.CompactSerialize()
}

func (s *testSigner) JWKS() ([]byte, error) {
	return json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &s.key.PublicKey, KeyID: "test-kid", Algorithm: "ES256", Use: "sig"}}})
}

// verifyJWS checks a compact JWS with the signer's public key and returns the payload.
func (s *testSigner) verifyJWS(t *testing.T, compact string) []byte {
	t.Helper()
	obj, err := jose.ParseSignedCompact(compact, []jose.SignatureAlgorithm{jose.ES256})
	if err != nil {
		t.Fatalf("parse JWS: %v", err)
	}
	if obj.Signatures[0].Header.KeyID != "test-kid" {
		t.Fatalf("kid = %q", obj.Signatures[0].Header.KeyID)
	}
	payload, err := obj.Verify(&s.key.PublicKey)
	if err != nil {
		t.Fatalf("verify JWS: %v", err)
	}
	return payload
}

type fakeSanctions struct{ ready atomic.Bool }

func (f *fakeSanctions) Ready() bool         { return f.ready.Load() }
func (f *fakeSanctions) DataAsOf() time.Time { return time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC) }

type fakeChecker struct{ calls atomic.Int32 }

func (f *fakeChecker) Validate(q core.CheckQuery) error {
	if q.Domain == "bad domain" {
		return &preflight.InputError{Code: core.CodeInvalidParameter, Message: "domain: not a domain"}
	}
	return nil
}

func (f *fakeChecker) Check(ctx context.Context, q core.CheckQuery) (any, error) {
	f.calls.Add(1)
	risk, flags := "low", []string{}
	if q.Address == "0x098B716B8Aaf21512996dC57EB0615e2383E2f96" {
		risk, flags = "high", []string{"sanctioned_address"}
	}
	return map[string]any{"risk": risk, "flags": flags, "sanctions": map[string]any{"address_matches": []any{}},
		"domain": nil, "data_as_of": "2026-11-21T00:00:00Z", "disclaimer": "Informational screening only."}, nil
}

// fakePreflight parses JSON objects, rejects depth > 32 like the real parser, and signs a fixed decision.
type fakePreflight struct {
	signer *testSigner
	calls  atomic.Int32
}

func (f *fakePreflight) Parse(body []byte) (any, error) {
	depth, max := 0, 0
	for _, c := range body {
		switch c {
		case '{', '[':
			depth++
			if depth > max {
				max = depth
			}
		case '}', ']':
			depth--
		}
	}
	if max > 32 {
		return nil, &preflight.InputError{Code: "too_deep", Message: "JSON nesting deeper than 32"}
	}
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, &preflight.InputError{Code: "invalid_json", Message: err.Error()}
	}
	return m, nil
}

func (f *fakePreflight) Decide(ctx context.Context, in any) (*core.Decision, error) {
	f.calls.Add(1)
	decision := "allow"
	if _, ok := in.(map[string]any)["cart"]; ok {
		decision = "hold"
	}
	jws, err := f.signer.Sign([]byte(`{"decision":"` + decision + `"}`))
	if err != nil {
		return nil, errors.Join(receipts.ErrSigningUnavailable, err)
	}
	return &core.Decision{Decision: decision, ReceiptID: "r-1", Body: map[string]any{
		"decision": decision, "reasons": []string{decision + ": all rules passed"}, "chosen_option": nil,
		"options_evaluated": 1, "payee": nil, "data_as_of": "2026-11-21T00:00:00Z",
		"receipt": map[string]any{"id": "r-1", "ts": "2026-11-22T12:00:00Z", "input_sha256": "00", "decision": decision, "jws": jws},
	}}, nil
}

type fakeTrial struct {
	mu     sync.Mutex
	counts map[string]int
	fail   bool
}

func (f *fakeTrial) TakeTrial(ctx context.Context, client, day string, limit int, retention time.Duration) (bool, int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail {
		return false, 0, errors.New("store down")
	}
	k := client + "|" + day
	if f.counts[k] >= limit {
		return false, f.counts[k], nil
	}
	f.counts[k]++
	return true, f.counts[k], nil
}

type fakeEndpoints struct {
	updated time.Time
	obs     map[string][]store.Observation
}

func (f *fakeEndpoints) PutObservation(ctx context.Context, o store.Observation, _ store.Retention) error {
	return nil
}
func (f *fakeEndpoints) Observations(ctx context.Context, url string) ([]store.Observation, error) {
	return f.obs[url], nil
}
func (f *fakeEndpoints) IndexUpdatedAt(ctx context.Context) (time.Time, error) { return f.updated, nil }

type env struct {
	t         *testing.T
	srv       *Server
	http      *httptest.Server
	fac       *factest.Facilitator
	signer    *testSigner
	sanctions *fakeSanctions
	checker   *fakeChecker
	preflight *fakePreflight
	trial     *fakeTrial
	endpoints *fakeEndpoints
	storeErr  atomic.Pointer[error] // what Options.StoreHealth reports
	logs      *logbuf.Buffer
	registry  *prometheus.Registry
	// disconnected is closed when the server sees a paid request's client go away (newDisconnectEnv).
	disconnected chan struct{}
	deliveries   *countingDeliveries
}

// countingDeliveries is the memory store's Deliveries, counting reads, so a test can tell a retry is
// waiting for a settlement in flight.
type countingDeliveries struct {
	store.Deliveries
	reads   chan struct{} // one value per GetDelivery (dropped when nobody drains it)
	failPut atomic.Bool   // PutDelivery fails (a store that cannot write)
}

func (c *countingDeliveries) PutDelivery(ctx context.Context, key string, value []byte, ttl time.Duration) error {
	if c.failPut.Load() {
		return errors.New("store down")
	}
	return c.Deliveries.PutDelivery(ctx, key, value, ttl)
}

func (c *countingDeliveries) GetDelivery(ctx context.Context, key string) ([]byte, error) {
	b, err := c.Deliveries.GetDelivery(ctx, key)
	select {
	case c.reads <- struct{}{}:
	default:
	}
	return b, err
}

func newEnv(t *testing.T) *env {
	t.Helper()
	e := &env{t: t, fac: factest.New(t, testPayer), signer: newTestSigner(t), sanctions: &fakeSanctions{},
		checker: &fakeChecker{}, trial: &fakeTrial{counts: map[string]int{}},
		endpoints: &fakeEndpoints{updated: testNow.Add(-time.Hour), obs: map[string][]store.Observation{}},
		logs:      &logbuf.Buffer{}, registry: prometheus.NewRegistry(),
		deliveries: &countingDeliveries{Deliveries: memory.New(), reads: make(chan struct{}, 1)}}
	e.sanctions.ready.Store(true)
	e.preflight = &fakePreflight{signer: e.signer}
	cfg, err := config.Default()
	if err != nil {
		t.Fatal(err)
	}
	sc := cfg.Server
	sc.Fees.Network = "eip155:84532"
	sc.Fees.PayTo = testPayTo
	sc.Contact = "mailto:ops@example.com"
	sc.Fees.FacilitatorURL = e.fac.Srv.URL
	sc.Fees.SettleTimeout = config.Duration(2 * time.Second)
	now := func() time.Time { return testNow }
	facilitator := fees.NewFacilitator(e.fac.Srv.URL, nil, time.Second, time.Duration(sc.Fees.SettleTimeout))
	seller, err := fees.NewSeller(fees.SellerOptions{
		Terms: fees.Terms{Network: "eip155:84532", NetworkV1: "base-sepolia", Asset: testAsset, AssetName: "USDC",
			AssetVersion: "2", PayTo: testPayTo, MaxTimeoutSeconds: 60},
		Facilitator: facilitator, Signer: e.signer, Now: now,
	})
	if err != nil {
		t.Fatal(err)
	}
	e.http = httptest.NewUnstartedServer(nil)
	sc.BaseURL = "http://" + e.http.Listener.Addr().String()
	e.srv, err = New(Options{
		Config: sc, Rules: policy.DefaultRules(), Seller: seller,
		Trial:     trial.New(e.trial, sc.TrialLimit, time.Duration(sc.TrialRetention), now),
		Endpoints: e.endpoints, Deliveries: e.deliveries, Preflight: e.preflight, Checker: e.checker, Sanctions: e.sanctions,
		JWKS: e.signer.JWKS, FacilitatorURL: e.fac.Srv.URL, Now: now,
		StoreHealth: func(context.Context) error {
			if p := e.storeErr.Load(); p != nil {
				return *p
			}
			return nil
		},
		Logger: slog.New(slog.NewJSONHandler(e.logs, nil)), Metrics: e.registry,
	})
	if err != nil {
		t.Fatal(err)
	}
	e.http.Config = e.srv.HTTPServer()
	e.http.Start()
	t.Cleanup(e.http.Close)
	return e
}

// result is a response with its body read.
type result struct {
	*http.Response
	body []byte
}

func (r result) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("body is not JSON: %v: %s", err, r.body)
	}
	return m
}

func (r result) errCode(t *testing.T) string {
	t.Helper()
	m := r.json(t)
	e, _ := m["error"].(map[string]any)
	if e == nil {
		t.Fatalf("no error object in %s", r.body)
	}
	if _, ok := m["data_as_of"]; !ok {
		t.Fatalf("error body without data_as_of: %s", r.body)
	}
	c, _ := e["code"].(string)
	return c
}

// do sends a request and validates the answer against the served OpenAPI document.
func (e *env) do(method, path string, body []byte, header map[string]string) result {
	e.t.Helper()
	req, err := http.NewRequest(method, e.http.URL+path, bytes.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	if body == nil {
		req.Body = http.NoBody
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	r := result{Response: resp, body: b}
	validateResponse(e.t, e, req, body, r)
	return r
}

// challenge decodes the v2 PAYMENT-REQUIRED header of a 402.
func challengeV2(t *testing.T, r result) map[string]any {
	t.Helper()
	if r.StatusCode != http.StatusPaymentRequired {
		t.Fatalf("status %d, want 402: %s", r.StatusCode, r.body)
	}
	raw, err := base64.StdEncoding.DecodeString(r.Header.Get("PAYMENT-REQUIRED"))
	if err != nil {
		t.Fatalf("PAYMENT-REQUIRED: %v", err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// payV2 builds a PAYMENT-SIGNATURE header that copies accepts[0] of a challenge, with a nonce.
func payV2(t *testing.T, ch map[string]any, nonce string) map[string]string {
	t.Helper()
	accepted := ch["accepts"].([]any)[0]
	p := map[string]any{"x402Version": 2, "resource": ch["resource"], "accepted": accepted,
		"payload": map[string]any{"signature": "0x" + string(bytes.Repeat([]byte("ab"), 65)), "authorization": map[string]any{
			"from": testPayer, "to": testPayTo, "value": accepted.(map[string]any)["amount"], "validAfter": "0",
			"validBefore": "1795323957", "nonce": nonce}}}
	b, _ := json.Marshal(p)
	return map[string]string{"PAYMENT-SIGNATURE": base64.StdEncoding.EncodeToString(b)}
}

func payV1(t *testing.T, nonce string) map[string]string {
	p := map[string]any{"x402Version": 1, "scheme": "exact", "network": "base-sepolia",
		"payload": map[string]any{"signature": "0x00", "authorization": map[string]any{"from": testPayer, "to": testPayTo,
			"value": "10000", "validAfter": "0", "validBefore": "1795323957", "nonce": nonce}}}
	b, _ := json.Marshal(p)
	return map[string]string{"X-PAYMENT": base64.StdEncoding.EncodeToString(b)}
}

func decodeSettle(t *testing.T, v string) map[string]any {
	t.Helper()
	raw, err := base64.StdEncoding.DecodeString(v)
	if err != nil {
		t.Fatalf("settlement header: %v", err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func bufioReader(c net.Conn) *bufio.Reader { return bufio.NewReader(c) }
