package proxy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/elazarl/goproxy"

	"github.com/payguard/payguard/policy"
	"github.com/payguard/payguard/store/memory"
	"github.com/payguard/payguard/x402"
)

// benchToolsCall is an MCP tools/call without x402 and its answer (Streamable HTTP, application/json).
const (
	benchToolsCall   = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"get_weather","arguments":{"city":"San Francisco","units":"metric"},"_meta":{"progressToken":7}}}`
	benchToolsResult = `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"{\"city\":\"San Francisco\",\"weather\":\"foggy\",\"temperature\":15}"}],"structuredContent":{"city":"San Francisco","weather":"foggy","temperature":15},"isError":false}}`
)

// BenchmarkMCPPassThrough is the proxy's own work, in process, on a tools/call that carries no x402 and
// its answer (request and response handlers, the body read back): "mcp" as an MCP POST
// (application/json), "opaque" the same bytes as application/octet-stream, which the guard does not read:
// the difference is what following MCP costs a call that pays nothing.
func BenchmarkMCPPassThrough(b *testing.B) {
	for _, ct := range []string{"application/json", "application/octet-stream"} {
		name := map[string]string{"application/json": "mcp", "application/octet-stream": "opaque"}[ct]
		b.Run(name, func(b *testing.B) {
			p, _, _ := newTestProxy(b, memory.New(), testRules())
			defer p.Close()
			b.ReportAllocs()
			for b.Loop() {
				req, _ := http.NewRequest(http.MethodPost, "http://127.0.0.1:18080/mcp", strings.NewReader(benchToolsCall))
				req.Header.Set("Content-Type", ct)
				ctx := &goproxy.ProxyCtx{Req: req}
				if _, resp := p.onRequest(req, ctx); resp != nil {
					b.Fatalf("refused: %d", resp.StatusCode)
				}
				io.Copy(io.Discard, req.Body)
				resp := &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}},
					Body: io.NopCloser(strings.NewReader(benchToolsResult)), Request: req, ProtoMajor: 1, ProtoMinor: 1}
				out := p.onResponse(resp, ctx)
				io.Copy(io.Discard, out.Body)
			}
		})
	}
}

// BenchmarkMCPDecidedPayment is a whole paid MCP call, in process: the payment-required answer decided
// (the real engine, reserve and ticket, terms narrowed in structuredContent and content[0].text), the
// retried tools/call with _meta["x402/payment"] checked (replay mark, binding, ticket taken) and its
// answer's _meta settlement committed. Compare with BenchmarkGuardChallenge (an HTTP 402's decision).
func BenchmarkMCPDecidedPayment(b *testing.B) {
	rules := testRules()
	rules.DailyCapUSD = policy.USD(1_000_000_000_000_000)
	p, _, _ := newTestProxy(b, memory.New(), rules)
	defer p.Close()
	s := &mcpSeller{form: "both", offers: []x402.Requirement{offer(2, "eip155:84532", baseSepoliaUSDC, sellerPayTo, cent)}}
	terms, _ := json.Marshal(s.paymentRequired(json.RawMessage("7")))
	settled := `{"jsonrpc":"2.0","id":8,"result":{"content":[{"type":"text","text":"{}"}],"_meta":{"x402/payment-response":{"success":true,"transaction":"0xf034dd236f16a9dc19b2927063c377438f76fcb0bd4dbaddfd4852eed0d9e08e","network":"eip155:84532","payer":"` + buyerAddress + `"}}}}`
	t := &testing.T{}
	b.ReportAllocs()
	for b.Loop() {
		req, _ := http.NewRequest(http.MethodPost, "http://127.0.0.1:18080/mcp", strings.NewReader(benchToolsCall))
		req.Header.Set("Content-Type", "application/json")
		ctx := &goproxy.ProxyCtx{Req: req}
		p.onRequest(req, ctx)
		resp := &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}},
			Body: io.NopCloser(bytes.NewReader(terms)), Request: req, ProtoMajor: 1, ProtoMinor: 1}
		out := p.onResponse(resp, ctx)
		body, _ := io.ReadAll(out.Body)
		var msg map[string]any
		json.Unmarshal(body, &msg)
		pr := termsOf(t, msg)
		if pr == nil {
			b.Fatalf("not allowed: %s", body)
		}
		pay, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": map[string]any{
			"name": "get_weather", "arguments": map[string]any{}, "_meta": map[string]any{"x402/payment": signMCP(t, pr, 0, nil)}}})
		req, _ = http.NewRequest(http.MethodPost, "http://127.0.0.1:18080/mcp", bytes.NewReader(pay))
		req.Header.Set("Content-Type", "application/json")
		ctx = &goproxy.ProxyCtx{Req: req}
		if _, refused := p.onRequest(req, ctx); refused != nil {
			rb, _ := io.ReadAll(refused.Body)
			b.Fatalf("payment refused: %s", rb)
		}
		resp = &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}},
			Body: io.NopCloser(strings.NewReader(settled)), Request: req, ProtoMajor: 1, ProtoMinor: 1}
		out = p.onResponse(resp, ctx)
		io.Copy(io.Discard, out.Body)
	}
}

// BenchmarkMCPPassThroughRoundTrip is a tools/call without x402 through the proxy on loopback, end to end
// (client → payguard → httptest server → back), "mcp" against the same bytes as an opaque body: the
// added share of a real round trip.
func BenchmarkMCPPassThroughRoundTrip(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, benchToolsResult)
	}))
	defer srv.Close()
	p, _, _ := newTestProxy(b, memory.New(), testRules())
	defer p.Close()
	front := httptest.NewServer(p)
	defer front.Close()
	pu, _ := url.Parse(front.URL)
	client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(pu)}, Timeout: 10 * time.Second}
	for _, ct := range []string{"application/json", "application/octet-stream"} {
		name := map[string]string{"application/json": "mcp", "application/octet-stream": "opaque"}[ct]
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			took := make([]time.Duration, 0, 1<<16)
			for b.Loop() {
				start := time.Now()
				req, _ := http.NewRequest(http.MethodPost, srv.URL+"/mcp", strings.NewReader(benchToolsCall))
				req.Header.Set("Content-Type", ct)
				resp, err := client.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				took = append(took, time.Since(start))
			}
			// The measure is the tail: p50 and p99 of the round trips of this run.
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2].Nanoseconds()), "p50-ns")
			b.ReportMetric(float64(took[len(took)*99/100].Nanoseconds()), "p99-ns")
		})
	}
}
