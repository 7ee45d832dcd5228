package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/payguard/payguard/config"
	"github.com/payguard/payguard/internal/logbuf"
	"github.com/payguard/payguard/policy"
	"github.com/payguard/payguard/preflight"
	"github.com/payguard/payguard/receipts"
	"github.com/payguard/payguard/screening"
	"github.com/payguard/payguard/screening/sanctions"
	"github.com/payguard/payguard/server"
	"github.com/payguard/payguard/server/core"
	"github.com/payguard/payguard/server/fees"
	"github.com/payguard/payguard/server/internal/factest"
	"github.com/payguard/payguard/server/trial"
	"github.com/payguard/payguard/store/memory"
)

// Test terms: Base Sepolia USDC.
const (
	testAsset  = "0x036CbD53842c5426634e7929541eC2318f3dCF7e"
	testPayTo  = "0xf54127927F219FB78C8D1A1fF3D7dc6D7f70C98E"
	testPayer  = "0xf9A721373C534a2d7dbAad7b5bDF25BED26B51c1"
	sanctioned = "0x098B716B8Aaf21512996dC57EB0615e2383E2f96" // LAZARUS GROUP in the OFAC excerpt
	cleanAddr  = "0x1111111111111111111111111111111111111111"
)

// The OFAC excerpt the interop tests also use (two real rows).
var ofacDir = "../../interop/testdata/ofac"

// switchSigner is the receipt key set with a switch that makes signing fail.
type switchSigner struct {
	ks   *receipts.KeySet
	fail atomic.Bool
}

func (s *switchSigner) Sign(payload []byte) (string, error) {
	if s.fail.Load() {
		return "", errors.New("key unavailable")
	}
	return s.ks.Sign(payload)
}

// sanctionsSwitch reports the screener's state unless switched off.
type sanctionsSwitch struct {
	*sanctions.Screener
	off atomic.Bool
}

func (s *sanctionsSwitch) Ready() bool { return !s.off.Load() && s.Screener.Ready() }

type env struct {
	t         *testing.T
	url       string // http://127.0.0.1:port
	fac       *factest.Facilitator
	signer    *switchSigner
	sanctions *sanctionsSwitch
	store     *memory.Store
	jwks      []byte
	handler   *Handler
	logs      *logbuf.Buffer
	registry  *prometheus.Registry // the server's metrics
}

// newEnv runs payguard serve's API with MCP mounted, on real engines (OFAC excerpt, receipt keys, memory
// store) and a fake facilitator, on a loopback listener.
func newEnv(t *testing.T) *env {
	t.Helper()
	e := &env{t: t, fac: factest.New(t, testPayer), store: memory.New(), logs: &logbuf.Buffer{},
		registry: prometheus.NewRegistry()}
	log := slog.New(slog.NewJSONHandler(e.logs, nil))
	list, err := sanctions.LoadDir(ofacDir)
	if err != nil {
		t.Fatal(err)
	}
	e.sanctions = &sanctionsSwitch{Screener: sanctions.NewScreener(list)}
	ks, err := receipts.GenerateKey(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	e.signer = &switchSigner{ks: ks}
	if e.jwks, err = ks.PublicJWKS(); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Default()
	if err != nil {
		t.Fatal(err)
	}
	sc := cfg.Server
	sc.Fees.Network = "eip155:84532"
	sc.Fees.PayTo = testPayTo
	sc.Fees.FacilitatorURL = e.fac.Srv.URL
	seller, err := fees.NewSeller(fees.SellerOptions{
		Terms: fees.Terms{Network: "eip155:84532", NetworkV1: "base-sepolia", Asset: testAsset, AssetName: "USDC",
			AssetVersion: "2", PayTo: testPayTo, MaxTimeoutSeconds: 60},
		Facilitator: fees.NewFacilitator(e.fac.Srv.URL, nil, 2*time.Second, 2*time.Second), Signer: ks,
	})
	if err != nil {
		t.Fatal(err)
	}
	engine := preflight.New(preflight.Options{Rules: policy.DefaultRules(), Sanctions: e.sanctions.Screener, Signer: e.signer})
	checker := screening.NewChecker(screening.CheckerOptions{Sanctions: e.sanctions.Screener})
	hs := httptest.NewUnstartedServer(nil)
	sc.BaseURL = "http://" + hs.Listener.Addr().String()
	srv, err := server.New(server.Options{
		Config: sc, Rules: policy.DefaultRules(), Seller: seller,
		Trial:     trial.New(e.store, sc.TrialLimit, time.Duration(sc.TrialRetention), nil),
		Endpoints: e.store, Preflight: core.PreflightPort(engine), Checker: core.CheckerPort(checker), Sanctions: e.sanctions,
		JWKS: ks.PublicJWKS, FacilitatorURL: e.fac.Srv.URL, Logger: log, Metrics: e.registry,
	})
	if err != nil {
		t.Fatal(err)
	}
	e.handler, err = New(Options{Core: srv.Core(), BaseURL: sc.BaseURL, Rules: policy.DefaultRules(),
		JWKS: ks.PublicJWKS, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	srv.Mount("/mcp", e.handler)
	hs.Config = srv.HTTPServer()
	hs.Start()
	t.Cleanup(hs.Close)
	e.url = hs.URL
	return e
}

// session connects the official Go SDK client over Streamable HTTP.
func (e *env) session() *sdk.ClientSession {
	e.t.Helper()
	c := sdk.NewClient(&sdk.Implementation{Name: "payguard-test", Version: "0"}, nil)
	s, err := c.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: e.url + "/mcp",
		DisableStandaloneSSE: true, MaxRetries: -1}, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { s.Close() })
	return s
}

// call runs a tool and returns the result with its structured content decoded.
func (e *env) call(s *sdk.ClientSession, name string, args any, meta sdk.Meta) (*sdk.CallToolResult, map[string]any) {
	e.t.Helper()
	res, err := s.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args, Meta: meta})
	if err != nil {
		e.t.Fatalf("%s: %v", name, err)
	}
	var sc map[string]any
	if res.StructuredContent != nil {
		b, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(b, &sc); err != nil {
			e.t.Fatalf("%s: structuredContent is not an object: %s", name, b)
		}
	}
	if len(res.Content) == 0 {
		e.t.Fatalf("%s: no content", name)
	}
	return res, sc
}

// errCode is a tool error's code, failing when the result is not an error with SPEC §9.1's error body.
func errCode(t *testing.T, res *sdk.CallToolResult, sc map[string]any) string {
	t.Helper()
	if !res.IsError {
		t.Fatalf("not an error: %v", sc)
	}
	if _, ok := sc["data_as_of"]; !ok {
		t.Fatalf("error without data_as_of: %v", sc)
	}
	e, _ := sc["error"].(map[string]any)
	if e == nil {
		t.Fatalf("no error object: %v", sc)
	}
	return e["code"].(string)
}

// paymentRequired checks an x402 payment-required result and returns its PaymentRequired object.
func paymentRequired(t *testing.T, res *sdk.CallToolResult, sc map[string]any) map[string]any {
	t.Helper()
	if !res.IsError || sc["x402Version"] != float64(2) || sc["accepts"] == nil {
		t.Fatalf("not a payment-required result: %v", sc)
	}
	var fromText map[string]any
	if err := json.Unmarshal([]byte(res.Content[0].(*sdk.TextContent).Text), &fromText); err != nil {
		t.Fatalf("content[0].text is not the PaymentRequired JSON: %v", err)
	}
	a, _ := json.Marshal(fromText)
	b, _ := json.Marshal(sc)
	if !bytes.Equal(a, b) {
		t.Fatalf("content[0].text differs from structuredContent:\n%s\n%s", a, b)
	}
	return sc
}

var nonceSeq atomic.Int64

// payment is a v2 PaymentPayload for accepts[0] of a payment-required object, with a fresh nonce.
func payment(pr map[string]any) map[string]any {
	accepted := pr["accepts"].([]any)[0].(map[string]any)
	nonce := fmt.Sprintf("0x%064x", nonceSeq.Add(1)+time.Now().UnixNano())
	return map[string]any{"x402Version": 2, "resource": pr["resource"], "accepted": accepted,
		"payload": map[string]any{"signature": "0x" + strings.Repeat("ab", 65), "authorization": map[string]any{
			"from": testPayer, "to": testPayTo, "value": accepted["amount"], "validAfter": "0",
			"validBefore": fmt.Sprint(time.Now().Add(time.Minute).Unix()), "nonce": nonce}}}
}

// challengeFor asks a tool for its payment terms by calling it after the trial is used up (or for a tool
// without trial), and returns the payment-required object.
func (e *env) challengeFor(s *sdk.ClientSession, name string, args any) map[string]any {
	e.t.Helper()
	res, sc := e.call(s, name, args, sdk.Meta{MetaPayment: map[string]any{"x402Version": 2}})
	pr := paymentRequired(e.t, res, sc)
	if pr["error"] != "invalid_payload" {
		e.t.Fatalf("a malformed payment: error %v", pr["error"])
	}
	return pr
}

// rpc posts one raw JSON-RPC message to /mcp as an MCP client would and returns the HTTP answer.
func (e *env) rpc(body string, header map[string]string) (*http.Response, []byte) {
	e.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, e.url+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range header {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}
