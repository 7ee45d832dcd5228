package proxy

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/payguard/payguard/x402"
)

// mcpSeller is an MCP server selling one tool ("weather") with x402 over MCP, in the shapes the official
// SDKs and common servers write: terms in structuredContent and content[0].text (x402.mcp, @x402/mcp,
// payguard serve), in text only, wrapped in text (FastMCP's "Error executing tool"), or as a JSON-RPC error
// 402; answers as application/json or as an event stream. It verifies a payment like the HTTP test seller
// (terms, recipient, value, nonce) and counts every request whose body mentions x402: none may arrive
// that payguard did not release.
type mcpSeller struct {
	offers []x402.Requirement
	form   string // "both", "text", "wrapped", "error", "v1", "snake"
	sse    bool
	srv    *httptest.Server

	mu      sync.Mutex
	nonces  map[string]bool
	paid    atomic.Int64
	settled atomic.Int64
	x402In  atomic.Int64 // requests whose body mentions x402 (a payment reached the seller)
	bodies  [][]byte
	settle  bool // answer a payment with success (default) or not
	// upto: the usage an upto payment settles (atomic units) and, when set, the amount its settlement claims
	// instead (a lying seller or facilitator).
	usage, uptoClaim string
	uptoClaimValue   any
}

func newMCPSeller(t *testing.T, form string, sse bool, offers ...x402.Requirement) *mcpSeller {
	s := &mcpSeller{offers: offers, form: form, sse: sse, nonces: map[string]bool{}, settle: true}
	s.srv = httptest.NewServer(s)
	t.Cleanup(s.srv.Close)
	return s
}

func (s *mcpSeller) url() string { return s.srv.URL + "/mcp" }

// received is every request body the seller got, in order.
func (s *mcpSeller) received() [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([][]byte(nil), s.bodies...)
}

func (s *mcpSeller) challenge() map[string]any {
	accepts := []any{}
	version := 2
	if s.form == "v1" {
		version = 1
	}
	for _, o := range s.offers {
		o.Version = version
		b, _ := json.Marshal(o)
		var m map[string]any
		json.Unmarshal(b, &m)
		if version == 1 {
			m["resource"] = "mcp://tool/weather"
		}
		accepts = append(accepts, m)
	}
	pr := map[string]any{"x402Version": version, "error": "Payment required", "accepts": accepts}
	if version == 2 {
		pr["resource"] = map[string]any{"url": "mcp://tool/weather", "description": "Tool: weather", "mimeType": "application/json"}
	}
	if s.form == "snake" {
		delete(pr, "x402Version")
		pr["x402_version"] = 2
	}
	return pr
}

func (s *mcpSeller) paymentRequired(id json.RawMessage) map[string]any {
	pr := s.challenge()
	text, _ := json.Marshal(pr)
	msg := map[string]any{"jsonrpc": "2.0", "id": id}
	switch s.form {
	case "error":
		msg["error"] = map[string]any{"code": 402, "message": "Payment required", "data": pr}
	case "text":
		msg["result"] = map[string]any{"isError": true, "content": []any{map[string]any{"type": "text", "text": string(text)}}}
	case "wrapped":
		msg["result"] = map[string]any{"isError": true, "content": []any{map[string]any{"type": "text",
			"text": "Error executing tool weather: " + string(text)}}}
	default:
		msg["result"] = map[string]any{"isError": true, "structuredContent": pr,
			"content": []any{map[string]any{"type": "text", "text": string(text)}, map[string]any{"type": "text", "text": "Pay to call weather."}}}
	}
	return msg
}

type rpcMsg struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method"`
	Params  struct {
		Name string                     `json:"name"`
		Meta map[string]json.RawMessage `json:"_meta"`
	} `json:"params"`
}

func (s *mcpSeller) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if mentionsX402(body) {
		s.x402In.Add(1)
	}
	s.mu.Lock()
	s.bodies = append(s.bodies, body)
	s.mu.Unlock()
	var m rpcMsg
	if err := json.Unmarshal(body, &m); err != nil || m.Method == "" {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	var out map[string]any
	switch m.Method {
	case "tools/call":
		out = s.call(m)
	default:
		out = map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": map[string]any{"tools": []any{}}}
	}
	b, _ := json.Marshal(out)
	if s.sse {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "event: message\ndata: %s\n\n", b)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(b)
}

func (s *mcpSeller) call(m rpcMsg) map[string]any {
	raw, ok := m.Params.Meta["x402/payment"]
	if !ok {
		return s.paymentRequired(m.ID)
	}
	// As Python's x402 seller (pydantic) reads them: null optional members are absent.
	var generic map[string]any
	json.Unmarshal(raw, &generic)
	for k, v := range generic {
		if v == nil {
			delete(generic, k)
		}
	}
	if res, ok := generic["resource"].(map[string]any); ok {
		for k, v := range res {
			if v == nil {
				delete(res, k)
			}
		}
	}
	raw, _ = json.Marshal(generic)
	pl, err := x402.ParsePaymentPayload(raw)
	if err != nil {
		return s.paymentRequired(m.ID)
	}
	if pl.Accepted != nil && x402.IsSolanaNetwork(pl.Accepted.Network) {
		return s.callSolana(m, pl) // payment_svm_test.go
	}
	ev, err := pl.ExactEVM()
	if err == nil && ev.Permit2 != nil {
		return s.callUpto(m, ev.Permit2)
	}
	if err != nil || ev.Authorization == nil {
		return s.paymentRequired(m.ID)
	}
	a := ev.Authorization
	var req *x402.Requirement
	for i := range s.offers {
		if x402.SameAddress(a.To, s.offers[i].PayTo) && a.Value == s.offers[i].Amount {
			req = &s.offers[i]
		}
	}
	s.mu.Lock()
	used := s.nonces[a.Nonce]
	s.nonces[a.Nonce] = true
	s.mu.Unlock()
	if req == nil || used {
		return s.paymentRequired(m.ID)
	}
	amount, _ := x402.ParseAtomic(a.Value)
	settle := map[string]any{"success": s.settle, "transaction": "0xf034dd236f16a9dc19b2927063c377438f76fcb0bd4dbaddfd4852eed0d9e08e",
		"network": req.Network, "payer": a.From}
	if s.settle {
		s.paid.Add(1)
		s.settled.Add(int64(amount))
	} else {
		settle["errorReason"] = "insufficient_funds"
	}
	return map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": map[string]any{
		"content":           []any{map[string]any{"type": "text", "text": `{"weather":"foggy"}`}},
		"structuredContent": map[string]any{"weather": "foggy"},
		"_meta":             map[string]any{"x402/payment-response": settle}}}
}

// mcpBuyer is an MCP client through payguard: it posts JSON-RPC and reads the answer as JSON or SSE.
type mcpBuyer struct {
	t      *testing.T
	client *http.Client
	url    string
	next   int
}

func (h *harness) mcpBuyer(url string) *mcpBuyer {
	return &mcpBuyer{t: h.t, client: h.buyer().client, url: url}
}

// post sends body and returns the HTTP status, headers and the JSON-RPC messages of the answer.
func (b *mcpBuyer) post(body []byte) (*http.Response, []map[string]any) {
	b.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, b.url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := b.client.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	return resp, readRPC(b.t, resp)
}

func readRPC(t *testing.T, resp *http.Response) []map[string]any {
	t.Helper()
	var docs [][]byte
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		var data []string
		for sc.Scan() {
			line := sc.Text()
			if line == "" && data != nil {
				docs = append(docs, []byte(strings.Join(data, "\n")))
				data = nil
			} else if strings.HasPrefix(line, "data:") {
				data = append(data, strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " "))
			}
		}
	} else {
		b, _ := io.ReadAll(resp.Body)
		if len(bytes.TrimSpace(b)) > 0 {
			docs = append(docs, b)
		}
	}
	var out []map[string]any
	for _, d := range docs {
		d = bytes.TrimSpace(d)
		if len(d) > 0 && d[0] == '[' {
			var arr []map[string]any
			if err := json.Unmarshal(d, &arr); err != nil {
				t.Fatalf("answer is no JSON-RPC batch: %v: %s", err, d)
			}
			out = append(out, arr...)
			continue
		}
		var m map[string]any
		if err := json.Unmarshal(d, &m); err != nil {
			t.Fatalf("answer is no JSON-RPC message: %v: %s", err, d)
		}
		out = append(out, m)
	}
	return out
}

// call sends a tools/call of weather with meta (nil: none) and returns its one answer.
func (b *mcpBuyer) call(meta map[string]any) (*http.Response, map[string]any) {
	b.t.Helper()
	b.next++
	params := map[string]any{"name": "weather", "arguments": map[string]any{"city": "sf"}}
	if meta != nil {
		params["_meta"] = meta
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": b.next, "method": "tools/call", "params": params})
	resp, msgs := b.post(body)
	if len(msgs) != 1 {
		b.t.Fatalf("answer to tools/call: %d messages %v", len(msgs), msgs)
	}
	return resp, msgs[0]
}

// termsOf reads the payment terms of an answer as Python's x402MCPSession does: structuredContent, then any
// content text (whole, or the JSON inside it), then a JSON-RPC error 402's data. nil when none.
func termsOf(t *testing.T, msg map[string]any) *x402.PaymentRequired {
	t.Helper()
	var cands []any
	if res, ok := msg["result"].(map[string]any); ok && res["isError"] == true {
		cands = append(cands, res["structuredContent"])
		items, _ := res["content"].([]any)
		for _, it := range items {
			m, _ := it.(map[string]any)
			if s, ok := m["text"].(string); ok {
				if i, j := strings.Index(s, "{"), strings.LastIndex(s, "}"); i >= 0 && j > i {
					s = s[i : j+1]
				}
				var v any
				if json.Unmarshal([]byte(s), &v) == nil {
					cands = append(cands, v)
				}
			}
		}
	}
	if e, ok := msg["error"].(map[string]any); ok && e["code"] == float64(402) {
		cands = append(cands, e["data"])
	}
	for _, c := range cands {
		m, ok := c.(map[string]any)
		if !ok {
			continue
		}
		if v, ok := m["x402_version"]; ok {
			m["x402Version"] = v
			delete(m, "x402_version")
		}
		if _, ok := m["x402Version"]; !ok {
			continue
		}
		if a, _ := m["accepts"].([]any); len(a) == 0 {
			continue
		}
		b, _ := json.Marshal(m)
		pr, err := x402.ParsePaymentRequired(b)
		if err != nil {
			t.Fatalf("terms unreadable: %v: %s", err, b)
		}
		return pr
	}
	return nil
}

// allTerms is every offer the answer carries in any place a client reads, for "nothing else to pay" checks.
func allTerms(msg map[string]any) string {
	b, _ := json.Marshal(msg)
	return string(b)
}

// signMCP signs option i of pr as a plain JSON PaymentPayload (as _meta carries it).
func signMCP(t *testing.T, pr *x402.PaymentRequired, i int, tamper func(*x402.EIP3009Authorization)) map[string]any {
	t.Helper()
	opt := pr.Accepts[i]
	var nonce [32]byte
	rand.Read(nonce[:])
	auth := x402.EIP3009Authorization{From: buyerAddress, To: opt.PayTo, Value: opt.Amount, ValidAfter: "0",
		ValidBefore: strconv.FormatInt(time.Now().Add(time.Minute).Unix(), 10), Nonce: "0x" + hex.EncodeToString(nonce[:])}
	if tamper != nil {
		tamper(&auth)
	}
	pl := &x402.PaymentPayload{X402Version: pr.X402Version}
	if pr.X402Version == x402.V2 {
		pl.Resource, pl.Accepted = pr.Resource, &opt
	} else {
		pl.Scheme, pl.Network = opt.Scheme, opt.Network
	}
	pl.Payload, _ = json.Marshal(map[string]any{"signature": "0x" + hex.EncodeToString(make([]byte, 65)), "authorization": auth})
	b, err := json.Marshal(pl)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	json.Unmarshal(b, &m)
	return m
}

// callUpto answers an upto payment (a Permit2 authorization of the maximum): it settles s.usage, and reports
// s.uptoClaim instead when set.
func (s *mcpSeller) callUpto(m rpcMsg, a *x402.Permit2Authorization) map[string]any {
	var req *x402.Requirement
	for i := range s.offers {
		if s.offers[i].Scheme == "upto" && x402.SameAddress(a.Witness.To, s.offers[i].PayTo) && a.Permitted.Amount == s.offers[i].Amount {
			req = &s.offers[i]
		}
	}
	s.mu.Lock()
	used := s.nonces[a.Nonce]
	s.nonces[a.Nonce] = true
	s.mu.Unlock()
	if req == nil || used {
		return s.paymentRequired(m.ID)
	}
	usage, _ := x402.ParseAtomic(s.usage)
	s.paid.Add(1)
	s.settled.Add(int64(usage))
	claim := s.usage
	if s.uptoClaim != "" {
		claim = s.uptoClaim
	}
	settle := map[string]any{"success": true, "transaction": "0xf034dd236f16a9dc19b2927063c377438f76fcb0bd4dbaddfd4852eed0d9e08e",
		"network": req.Network, "payer": a.From, "amount": claim}
	if s.uptoClaimValue != nil {
		settle["amount"] = s.uptoClaimValue // a claim in another JSON type than a string
	}
	return map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": map[string]any{
		"content":           []any{map[string]any{"type": "text", "text": `{"tokens":42}`}},
		"structuredContent": map[string]any{"tokens": 42},
		"_meta":             map[string]any{"x402/payment-response": settle}}}
}
