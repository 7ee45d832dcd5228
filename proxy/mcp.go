package proxy

// x402 over MCP (SPEC §11.10). The x402 MCP transport carries the terms in a tools/call result (isError with
// a PaymentRequired in structuredContent or as JSON text in content), or in a JSON-RPC error 402 (its data);
// the payment in the retried request's params._meta["x402/payment"]; the settlement in
// result._meta["x402/payment-response"]. Over Streamable HTTP the request is a POST of JSON-RPC (one message
// or a batch) and the answer is application/json or a text/event-stream; over the older HTTP+SSE transport
// the answers arrive on a GET event stream. The proxy decides them with the HTTP 402 path's mechanism:
// decideChallenge (engine, hold, reservation, ticket) for the terms, checkPayload (replay, binding, ticket)
// for the payment, the same settlement commit. An MCP tool is the endpoint mcp://<host>/tool/<name>.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/payguard/payguard/x402"
	"github.com/payguard/payguard/x402/jsonscan"
)

// The x402 MCP transport's _meta keys.
const (
	metaPayment         = "x402/payment"
	metaPaymentResponse = "x402/payment-response"
)

// mcpMethod is the method an MCP tool's tickets, holds and observations are keyed under: every tools/call
// travels in a POST (Streamable HTTP and HTTP+SSE alike), whichever stream carries its answer.
const mcpMethod = http.MethodPost

// maxToolName bounds a tool name (MCP's own limit is 128 characters).
const maxToolName = 128

// mcpEndpoint is an MCP tool's endpoint URL: the tool, on the host the agent asked for (never a host the
// seller names), so that the engine's merchant domain, tickets, holds and the Index all key on it.
func mcpEndpoint(host, tool string) string {
	return "mcp://" + strings.ToLower(host) + "/tool/" + url.PathEscape(tool)
}

// mcpLogRequest is the request a decision about tool on host is logged and shown under: the console and
// the decision log read its host and path, which is mcp://tool/<name>.
func mcpLogRequest(req *http.Request, tool string) *http.Request {
	r := *req
	r.Method = mcpMethod
	r.URL = &url.URL{Scheme: "mcp", Host: req.URL.Host, Path: "mcp://tool/" + tool}
	return &r
}

// mcpRequest is what the proxy learned from a request whose body is JSON-RPC. A body that mentions nothing
// of x402 is kept unparsed (lazy): its ids and tool names are read only if its answer carries terms or must
// be refused, so a call that pays nothing costs two byte scans.
type mcpRequest struct {
	ids   [][]byte          // every request id in the document, to answer a refusal
	calls map[string]string // tools/call request ids (idKey) → tool name, to name the answers
	batch bool
	// unread: the body was too long to read whole; its answers are read as if every one answered a tools/call.
	unread bool
	paid   *mcpPaid // the payment it carries, once released
	lazy   []byte   // the body, not parsed yet (see load)
	// mayCall: the body may hold a tools/call (it names one, or holds an escape that could spell it).
	mayCall bool
}

// load parses a lazily kept body (checkStrict's reading; a body no strict reader agrees on names nothing).
func (r *mcpRequest) load() *mcpRequest {
	if r == nil || r.lazy == nil {
		return r
	}
	doc := r.lazy
	r.lazy = nil
	if checkStrict(doc) != nil {
		return r
	}
	if parsed, _ := parseMCPDocument(doc); parsed != nil {
		r.ids, r.calls, r.batch = parsed.ids, parsed.calls, parsed.batch
	}
	return r
}

// mcpPaid is a payment released in an MCP request: which answer carries its settlement.
type mcpPaid struct {
	id, tool string
}

// inspectsAnswers reports whether the answer to r may carry x402 terms or a settlement the guard must read.
func (r *mcpRequest) inspectsAnswers() bool {
	return r != nil && (r.unread || r.mayCall || len(r.calls) > 0)
}

// idKey is a JSON-RPC id as a map key: a string's decoded text, a number's text ("" for none or null).
func idKey(raw []byte) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	if s, ok := jsonString(raw); ok {
		return "s:" + s
	}
	return "n:" + string(raw)
}

// jsonBodyRequest reports whether req's body may be JSON that a server reads: declared JSON
// (application/json, +json), or undeclared or text/plain (what fetch sends a string as). Other bodies
// (forms, uploads) pass unread: a server that reads JSON-RPC from them is out of the guard's reach.
func jsonBodyRequest(req *http.Request) bool {
	if req.Body == nil || req.Body == http.NoBody || req.ContentLength == 0 {
		return false
	}
	ct := req.Header.Get("Content-Type")
	if ct == "" {
		return true
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return true // unreadable: read the body rather than trust the label
	}
	return mt == "application/json" || strings.HasSuffix(mt, "+json") || mt == "text/plain"
}

// errMCPRefused is a request body the guard refuses; its text is the reason.
type errMCPRefused struct{ class, why string }

func (e *errMCPRefused) Error() string { return e.why }

// readMCPRequest reads a JSON request body (at most maxMCPMessage bytes; a longer one is guarded while it
// streams, see tailGuard) and returns what it holds: nil when it is no JSON-RPC the guard needs to follow,
// and the payment it carries, if any.
func readMCPRequest(req *http.Request) (r *mcpRequest, pay *mcpPayment, err error, rpcish bool) {
	body, complete, err := peekRequestBody(req)
	if err != nil {
		return nil, nil, &errMCPRefused{"payment_malformed", "request body could not be read: " + err.Error()}, false
	}
	rpcish = bytes.Contains(body, []byte("jsonrpc"))
	r, pay, err = readMCPBody(req, body, complete)
	return r, pay, err, rpcish
}

// readMCPBody is readMCPRequest's reading of the body's first maxMCPMessage bytes (complete: all of it).
func readMCPBody(req *http.Request, body []byte, complete bool) (*mcpRequest, *mcpPayment, error) {
	if !complete {
		// Too long to read whole: it goes on streaming, and is cut off before its end if it turns out to
		// mention x402 (tailGuard), so a server never receives a whole body with a payment unread.
		req.Body = newTailGuard(req.Body)
		if bytes.Contains(body, []byte("jsonrpc")) || bytes.Contains(body, []byte(`\u`)) {
			return &mcpRequest{unread: true}, nil, nil
		}
		return nil, nil, nil
	}
	body = bytes.TrimPrefix(body, []byte("\xEF\xBB\xBF"))
	x402ish := mentionsX402(body)
	t := bytes.TrimSpace(body)
	if len(t) == 0 || (t[0] != '{' && t[0] != '[') {
		if x402ish && req.Header.Get("Content-Type") != "" && !strings.HasPrefix(strings.ToLower(req.Header.Get("Content-Type")), "text/plain") {
			return nil, nil, &errMCPRefused{"payment_malformed", "a JSON body that mentions x402 is not a JSON object or array"}
		}
		return nil, nil, nil
	}
	if !x402ish && !bytes.Contains(t, []byte("jsonrpc")) && !bytes.Contains(t, []byte(`\u`)) {
		return nil, nil, nil // no JSON-RPC name, no x402 name: nothing to follow
	}
	if !x402ish {
		return &mcpRequest{lazy: t, mayCall: bytes.Contains(t, []byte("tools/call")) || bytes.Contains(t, []byte(`\u`))}, nil, nil
	}
	if err := checkStrict(t); err != nil {
		return nil, nil, &errMCPRefused{"payment_malformed", "a JSON body that mentions x402 is refused: " + err.Error()}
	}
	r, msgs := parseMCPDocument(t)
	pay, err := findPayment(t, msgs)
	if err != nil {
		return r, nil, err
	}
	return r, pay, nil
}

// parseMCPDocument reads the messages of a JSON-RPC document (checkStrict already): a batch's elements or
// the one message. r is nil when no member is a JSON-RPC request.
func parseMCPDocument(doc []byte) (*mcpRequest, []jsonObject) {
	var raws [][]byte
	batch := doc[0] == '['
	if batch {
		raws, _ = jsonscan.Array(doc)
	} else {
		raws = [][]byte{doc}
	}
	r := &mcpRequest{batch: batch, calls: map[string]string{}}
	var msgs []jsonObject
	rpc := false
	for _, raw := range raws {
		m, ok := strictObject(raw)
		if !ok {
			msgs = append(msgs, nil)
			continue
		}
		msgs = append(msgs, m)
		method, isReq := jsonString(m["method"])
		if !isReq {
			continue
		}
		rpc = true
		if id, ok := m["id"]; ok && idKey(id) != "" {
			r.ids = append(r.ids, id)
			if method == "tools/call" {
				params, _ := strictObject(m["params"])
				name, _ := jsonString(params["name"])
				r.calls[idKey(id)] = name
			}
		}
	}
	if !rpc {
		return nil, msgs
	}
	return r, msgs
}

// mcpPayment is the one payment an MCP request carries.
type mcpPayment struct {
	id      []byte
	tool    string
	payload *x402.PaymentPayload
}

// findPayment finds the payment in a JSON-RPC document that mentions x402: every member name that folds
// to the payment key (x402/payment in any case or punctuation) anywhere in the document is counted, and
// there may be one, in its place: params._meta["x402/payment"] of a tools/call request (with an id) of a
// single message or a flat batch. A payment anywhere else (another spelling, _meta in another spelling or
// place, a notification, a response, a second payment, a nested batch) is refused: some server might read
// it, and it would not have been decided.
func findPayment(doc []byte, msgs []jsonObject) (*mcpPayment, error) {
	n := countPaymentKeys(doc)
	if n == 0 {
		return nil, nil
	}
	refuse := func(why string) error { return &errMCPRefused{"payment_malformed", why} }
	if n > 1 {
		return nil, refuse(fmt.Sprintf("the request carries %d x402 payment members; at most one payment, in params._meta[%q], is decided", n, metaPayment))
	}
	for _, m := range msgs {
		if m == nil {
			continue
		}
		params, ok := strictObject(m["params"])
		if !ok {
			continue
		}
		meta, ok := strictObject(params["_meta"])
		if !ok {
			continue
		}
		raw, ok := meta[metaPayment]
		if !ok {
			continue
		}
		method, _ := jsonString(m["method"])
		id, hasID := m["id"]
		switch {
		case method != "tools/call":
			return nil, refuse(fmt.Sprintf("an x402 payment in a %q request is refused: x402 over MCP pays tools/call", method))
		case !hasID || idKey(id) == "":
			return nil, refuse("an x402 payment in a notification (a request without an id) is refused")
		}
		name, ok := jsonString(params["name"])
		if !ok || !validToolName(name) {
			return nil, refuse("a paid tools/call names no valid tool")
		}
		pl, err := paymentOfMeta(raw)
		if err != nil {
			return nil, refuse(fmt.Sprintf("params._meta[%q] is not a readable x402 payment: %v", metaPayment, err))
		}
		return &mcpPayment{id: id, tool: name, payload: pl}, nil
	}
	return nil, refuse(fmt.Sprintf("an x402 payment member outside params._meta[%q] (another spelling or place) is refused", metaPayment))
}

// paymentOfMeta reads the payment value: the PaymentPayload object, or (as Python's x402.mcp server
// accepts) a string holding its JSON.
func paymentOfMeta(raw []byte) (*x402.PaymentPayload, error) {
	raw = bytes.TrimSpace(raw)
	if s, ok := jsonString(raw); ok {
		inner := []byte(s)
		if err := checkStrict(inner); err != nil {
			return nil, err
		}
		raw = bytes.TrimSpace(inner)
	}
	raw, err := dropNulls(raw)
	if err != nil {
		return nil, err
	}
	return x402.ParsePaymentPayload(raw)
}

// dropNulls removes the null members of a payment object and of its resource. The official Python MCP
// buyer (x402.mcp's x402MCPSession) dumps the payload without exclude_none, so its optional members come as
// null ("extensions": null, resource.description: null), which the Python seller reads as absent: so does
// payguard. accepted (compared whole with the allowed option) and payload (what is signed) are left as sent.
func dropNulls(raw []byte) ([]byte, error) {
	obj, ok := strictObject(raw)
	if !ok {
		return raw, nil // the parser says why
	}
	set := map[string][]byte{}
	for k, v := range obj {
		if string(bytes.TrimSpace(v)) == "null" {
			set[k] = nil
		}
	}
	if res, ok := strictObject(obj["resource"]); ok {
		rset := map[string][]byte{}
		for k, v := range res {
			if string(bytes.TrimSpace(v)) == "null" {
				rset[k] = nil
			}
		}
		if len(rset) > 0 {
			r, err := withMembers(obj["resource"], rset)
			if err != nil {
				return nil, err
			}
			set["resource"] = r
		}
	}
	if len(set) == 0 {
		return raw, nil
	}
	return withMembers(raw, set)
}

func validToolName(name string) bool {
	if name == "" || len(name) > maxToolName || !utf8.ValidString(name) {
		return false
	}
	for _, r := range name {
		if r < 0x20 || r == 0x7f {
			return false
		}
	}
	return true
}

// checkMCPRequest guards a JSON request body: a payment in it goes on only as checkPayload allows, for the
// tool it calls on the host the agent asked for. nil, nil: nothing to decide.
func (p *Proxy) checkMCPRequest(req *http.Request, st *reqState) (*verdict, string) {
	if !jsonBodyRequest(req) {
		return nil, ""
	}
	r, pay, err, rpcish := readMCPRequest(req)
	// Reading the body to its end fills req.Trailer from an undeclared trailer section: it is judged here
	// (a payment in it is refused) and never sent on, like every request trailer (onRequest).
	trailer := req.Trailer
	req.Trailer = nil
	for name := range trailer {
		if isPaymentHeader(name) {
			v := failClosed("payment_malformed", "a payment header sent as a request trailer is not checked, so it is refused")
			return &v, ""
		}
	}
	st.mcp = r
	var refused *errMCPRefused
	if errors.As(err, &refused) {
		if st.mcp == nil && rpcish {
			// A JSON-RPC body refused before its ids could be read: the refusal is still JSON-RPC (id null).
			st.mcp = &mcpRequest{}
		}
		v := failClosed(refused.class, refused.why)
		return &v, ""
	}
	if pay == nil {
		return nil, ""
	}
	v := p.checkPayload(req.Context(), mcpMethod, mcpEndpoint(req.URL.Host, pay.tool), pay.payload)
	if v.Decision == allow && v.Release != nil && r != nil {
		r.paid = &mcpPaid{id: idKey(pay.id), tool: pay.tool}
	}
	return &v, pay.tool
}

// peekRequestBody reads up to maxMCPMessage bytes of a request body within the body deadline and puts them
// back in front of the rest. complete: the whole body was read.
func peekRequestBody(req *http.Request) ([]byte, bool, error) {
	orig := req.Body
	timer := time.AfterFunc(challengeReadTimeout, func() { orig.Close() })
	prefix, err := io.ReadAll(io.LimitReader(orig, maxMCPMessage+1))
	if !timer.Stop() && err == nil {
		err = errors.New("read deadline exceeded")
	}
	if err != nil {
		orig.Close()
		return nil, false, err
	}
	if len(prefix) <= maxMCPMessage {
		orig.Close()
		req.Body = io.NopCloser(bytes.NewReader(prefix))
		req.ContentLength = int64(len(prefix))
		return prefix, true, nil
	}
	req.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(prefix), orig), orig}
	return prefix, false, nil
}

// tailGuard passes a long JSON request body on as it streams, and fails it (the upstream request is cut
// off before its end, so no server reads it whole) as soon as it mentions x402: a payment the guard could
// not read whole must not arrive. It keeps the last bytes read so that a mention split across reads is
// found.
type tailGuard struct {
	io.ReadCloser
	carry   []byte
	tripped bool
}

func newTailGuard(rc io.ReadCloser) *tailGuard { return &tailGuard{ReadCloser: rc} }

// errTailX402 fails a long request body that mentions x402.
var errTailX402 = errors.New("payguard: a request body over 64 KiB that mentions x402 is not forwarded")

func (g *tailGuard) Read(b []byte) (int, error) {
	if g.tripped {
		return 0, errTailX402
	}
	n, err := g.ReadCloser.Read(b)
	if n > 0 {
		window := append(g.carry, b[:n]...)
		if mentionsX402(window) {
			g.tripped = true
			return 0, errTailX402
		}
		keep := 5 // the longest mention ("\u0078") less one byte
		if len(window) < keep {
			keep = len(window)
		}
		g.carry = append(g.carry[:0], window[len(window)-keep:]...)
	}
	return n, err
}

// marshalJSON is json.Marshal without HTML escaping (as JSON.stringify writes).
func marshalJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte{'\n'}), nil
}

// mcpRefusal answers a refused MCP request as JSON-RPC, so that an MCP client reads it as the answer to
// its call (HTTP 200, one error per request id, or one with a null id when none could be read): the
// error's data is the refusal body of an HTTP refusal (decision, reasons, receipt, hold).
func mcpRefusal(req *http.Request, r *mcpRequest, v verdict, retryAfter time.Duration) *http.Response {
	body, h := refusalOf(v, retryAfter)
	var ids [][]byte
	batch := false
	if r != nil {
		r.load()
		ids, batch = r.ids, r.batch
	}
	if len(ids) == 0 {
		ids = [][]byte{[]byte("null")}
	}
	var msgs [][]byte
	for _, id := range ids {
		msgs = append(msgs, rpcError(id, mcpRefusalCode, body.Message+": "+strings.Join(body.Reasons, "; "), body))
	}
	data := msgs[0]
	if batch {
		data = append([]byte{'['}, bytes.Join(msgs, []byte{','})...)
		data = append(data, ']')
	}
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	return newResponse(req, http.StatusOK, h, data)
}

// mcpRefusalCode is the JSON-RPC error code of a payment payguard refused (an application code, outside
// JSON-RPC's reserved range; x402's own is 402, which asks for a payment).
const mcpRefusalCode = 403

// rpcError is a JSON-RPC error message.
func rpcError(id []byte, code int, message string, data any) []byte {
	d, err := marshalJSON(data)
	if err != nil {
		d = []byte("null")
	}
	out := []byte(`{"jsonrpc":"2.0","id":`)
	out = append(out, bytes.TrimSpace(id)...)
	out = append(out, fmt.Sprintf(`,"error":{"code":%d,"message":`, code)...)
	out = appendJSONString(out, message)
	out = append(out, `,"data":`...)
	out = append(out, d...)
	return append(out, "}}"...)
}
