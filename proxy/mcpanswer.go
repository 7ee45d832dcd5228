package proxy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"strings"

	"github.com/payguard/payguard/x402"
	"github.com/payguard/payguard/x402/jsonscan"
)

// guardMCPAnswer guards what answers an MCP request: an application/json answer to a request that may call
// a tool is read (at most 64 KiB) and decided message by message; an event stream answering such a request,
// or a GET stream (Streamable HTTP's and the older HTTP+SSE transport's), is decided event by event as it
// streams (sseGuard). Everything else (tools/list, initialize, ...) passes untouched: only a tools/call result
// carries terms a client pays from.
func (p *Proxy) guardMCPAnswer(req *http.Request, resp *http.Response, st *reqState) *http.Response {
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch {
	case mt == "text/event-stream" && (st.mcp.inspectsAnswers() || req.Method == http.MethodGet):
		if coding := resp.Header.Get("Content-Encoding"); coding != "" && !strings.EqualFold(coding, "identity") {
			resp.Body.Close()
			return p.mcpAnswerRefused(req, st, "an MCP event stream in a content coding payguard cannot read ("+coding+")")
		}
		resp.Body = newSSEGuard(resp.Body, func(data []byte) []byte { return p.guardMCPDocument(req, st, data, false) })
		resp.ContentLength = -1
		resp.Header.Del("Content-Length")
		return resp
	case mt == "application/json" && st.mcp.inspectsAnswers():
		raw, complete, err := peekBody(resp)
		if err != nil {
			return p.mcpAnswerRefused(req, st, "the MCP answer could not be read: "+err.Error())
		}
		body := readBody(resp.Header.Get("Content-Encoding"), raw, complete)
		switch {
		case body.json == nil && body.coding != "":
			resp.Body.Close()
			return p.mcpAnswerRefused(req, st, "an MCP answer in a content coding payguard cannot read ("+body.coding+")")
		case body.json == nil:
			resp.Body.Close()
			return p.mcpAnswerRefused(req, st, fmt.Sprintf("an MCP answer to a tools/call over %d bytes cannot be read whole, so it is refused", maxMCPMessage))
		}
		if out := p.guardMCPDocument(req, st, body.json, true); out != nil {
			setBody(resp, out)
		}
	}
	return resp
}

// mcpAnswerRefused replaces an MCP answer payguard cannot read with a JSON-RPC refusal for the request's ids.
func (p *Proxy) mcpAnswerRefused(req *http.Request, st *reqState, why string) *http.Response {
	out := failClosed("challenge_malformed", why)
	p.logDecision("challenge", req, out, st.start)
	st.local = true
	return mcpRefusal(req, st.mcp, out, p.opts.RetryAfter)
}

// guardMCPDocument decides one JSON-RPC document (an answer body or one event's data) and returns its
// replacement, or nil to pass it unchanged. A document that does not mention x402 is not parsed.
// answer: it is a whole application/json answer (a refusal names the request's ids).
func (p *Proxy) guardMCPDocument(req *http.Request, st *reqState, doc []byte, answer bool) []byte {
	if !mentionsX402(doc) {
		return nil
	}
	t := bytes.TrimSpace(doc)
	if len(t) == 0 || (t[0] != '{' && t[0] != '[') {
		return nil // not JSON-RPC (an HTTP+SSE endpoint event, a comment): no MCP client pays from it
	}
	refuse := func(why string) []byte {
		out := failClosed("challenge_malformed", why)
		p.logDecision("challenge", req, out, st.start)
		var ids [][]byte
		if answer && st.mcp != nil {
			ids = st.mcp.load().ids
		}
		return refusalDocument(ids, answer && st.mcp != nil && st.mcp.batch, out, p)
	}
	if err := checkStrict(t); err != nil {
		return refuse("an MCP message that mentions x402 cannot be read: " + err.Error())
	}
	if t[0] == '[' {
		elems, _ := jsonscan.Array(t)
		changed := false
		for i, e := range elems {
			if out, err := p.guardMCPMessage(req, st, e); err != nil {
				return refuse(err.Error())
			} else if out != nil {
				elems[i], changed = out, true
			}
		}
		if !changed {
			return nil
		}
		return append(append([]byte{'['}, bytes.Join(elems, []byte{','})...), ']')
	}
	out, err := p.guardMCPMessage(req, st, t)
	if err != nil {
		return refuse(err.Error())
	}
	return out
}

// refusalDocument is a JSON-RPC refusal for ids (a null id when none), as one message or a batch.
func refusalDocument(ids [][]byte, batch bool, v verdict, p *Proxy) []byte {
	body, _ := refusalOf(v, p.opts.RetryAfter)
	if len(ids) == 0 {
		ids = [][]byte{[]byte("null")}
	}
	var msgs [][]byte
	for _, id := range ids {
		msgs = append(msgs, rpcError(id, mcpRefusalCode, body.Message+": "+strings.Join(body.Reasons, "; "), body))
	}
	if !batch {
		return msgs[0]
	}
	return append(append([]byte{'['}, bytes.Join(msgs, []byte{','})...), ']')
}

// prSite is one place of a message where an MCP client may read payment terms.
type prSite struct {
	kind string // "structured", "text" (content[item].text), "error" (error.data)
	item int
	pr   *x402.PaymentRequired
}

// guardMCPMessage decides one JSON-RPC message: a settlement of the payment this request released is
// recorded; payment terms (any form an MCP client pays from) are decided once for the message and then
// narrowed in every place, or replaced by the refusal. nil: unchanged.
func (p *Proxy) guardMCPMessage(req *http.Request, st *reqState, raw []byte) ([]byte, error) {
	msg, ok := strictObject(raw)
	if !ok {
		return nil, nil // a batch element that is no object: no client reads terms from it
	}
	key := idKey(msg["id"])
	var paid *mcpPaid
	if st.mcp != nil && st.mcp.paid != nil && st.mcp.paid.id == key && st.release != nil {
		paid = st.mcp.paid
	}
	var sites []prSite
	var result, rpcErr jsonObject
	var err error
	if r, ok := msg["result"]; ok {
		if result, ok = strictObject(r); !ok {
			return nil, nil
		}
		if paid != nil {
			p.recordMCPSettlement(req, st, result)
		}
		if sites, err = termsInResult(result); err != nil {
			return nil, err
		}
	} else if e, ok := msg["error"]; ok {
		if rpcErr, ok = strictObject(e); !ok {
			return nil, nil
		}
		if sites, err = termsInError(rpcErr); err != nil {
			return nil, err
		}
	}
	if len(sites) == 0 {
		return nil, nil
	}
	for _, s := range sites[1:] {
		if !sameOffer(s.pr, sites[0].pr) {
			return nil, fmt.Errorf("an MCP result offers different payment terms in different places")
		}
	}
	pr := sites[0].pr
	if paid != nil {
		// The seller refused or failed a payment payguard released: its terms go on with nothing to pay,
		// as for HTTP (intercept.go), so no second amount is reserved; paying again takes a new call.
		p.metrics.paymentsFailed.Inc()
		return rewriteSites(raw, result, rpcErr, sites, func(pr *x402.PaymentRequired) *x402.PaymentRequired {
			empty := *pr
			empty.Accepts = []x402.Requirement{}
			return &empty
		})
	}
	tool := ""
	if st.mcp != nil {
		tool = st.mcp.load().calls[key]
	}
	if tool == "" {
		tool = toolOfResource(pr) // a GET stream's answer: the seller's own word names it, nothing more
	}
	if !validToolName(tool) {
		tool = "unknown"
	}
	endpoint := mcpEndpoint(req.URL.Host, tool)
	record := p.observeChallengeAt(mcpMethod, endpoint, pr)
	out := p.decideChallenge(req.Context(), mcpMethod, endpoint, pr, nil)
	record()
	p.logDecision("challenge", mcpLogRequest(req, tool), out, st.start)
	if out.Decision == allow {
		return rewriteSites(raw, result, rpcErr, sites, func(pr *x402.PaymentRequired) *x402.PaymentRequired {
			return pr.Narrowed(out.Chosen)
		})
	}
	return refusedMessage(raw, rpcErr != nil, out, p)
}

// toolOfResource is the tool a challenge's resource.url names (mcp://tool/<name>), "" when none.
func toolOfResource(pr *x402.PaymentRequired) string {
	if pr.Resource == nil {
		return ""
	}
	u, err := url.Parse(pr.Resource.URL)
	if err != nil || u.Scheme != "mcp" || u.Host != "tool" {
		return ""
	}
	return strings.TrimPrefix(u.Path, "/")
}

func sameOffer(a, b *x402.PaymentRequired) bool {
	if len(a.Accepts) != len(b.Accepts) {
		return false
	}
	for i := range a.Accepts {
		if !sameTerms(a.Accepts[i], b.Accepts[i]) || a.Accepts[i].Scheme != b.Accepts[i].Scheme {
			return false
		}
	}
	return true
}

// falsy are the isError values pydantic's lax bool (the Python MCP SDK) reads as false; absent and null
// too. Any other value may read as true, so the result is searched for terms.
var falsy = map[string]bool{"false": true, "null": true, "0": true, `"false"`: true, `"0"`: true, `"no"`: true,
	`"off"`: true, `"f"`: true, `"n"`: true}

// termsInResult finds the payment terms of a tools/call result in every form an x402 MCP client reads:
// with isError, a PaymentRequired (x402Version or x402_version, accepts non-empty) in structuredContent, or
// as the JSON of a content item's text, whole or wrapped in other text (FastMCP's "Error executing tool
// ...: {...}", which Python's x402MCPSession extracts). Text that mentions x402 and offers accepts but
// cannot be read is an error: a client might pay from it.
func termsInResult(result jsonObject) ([]prSite, error) {
	if raw, ok := result["isError"]; !ok || falsy[strings.ToLower(string(bytes.TrimSpace(raw)))] {
		return nil, nil
	}
	var sites []prSite
	if sc, ok := result["structuredContent"]; ok {
		pr, err := paymentRequiredOf(sc)
		if err != nil {
			return nil, fmt.Errorf("structuredContent: %v", err)
		}
		if pr != nil {
			sites = append(sites, prSite{kind: "structured", pr: pr})
		}
	}
	items, _ := jsonscan.Array(bytes.TrimSpace(result["content"]))
	for i, it := range items {
		item, ok := strictObject(it)
		if !ok {
			continue
		}
		text, ok := jsonString(item["text"])
		if !ok || !mentionsX402([]byte(text)) {
			continue
		}
		pr, err := paymentRequiredInText(text)
		if err != nil {
			return nil, fmt.Errorf("content[%d].text: %v", i, err)
		}
		if pr != nil {
			sites = append(sites, prSite{kind: "text", item: i, pr: pr})
		}
	}
	return sites, nil
}

// termsInError finds the terms of a JSON-RPC error 402 (any number spelling of 402) in its data.
func termsInError(e jsonObject) ([]prSite, error) {
	var code json.Number
	if err := json.Unmarshal(e["code"], &code); err != nil {
		return nil, nil
	}
	if f, err := code.Float64(); err != nil || f != 402 {
		return nil, nil
	}
	pr, err := paymentRequiredOf(e["data"])
	if err != nil {
		return nil, fmt.Errorf("error.data: %v", err)
	}
	if pr == nil {
		return nil, nil
	}
	return []prSite{{kind: "error", pr: pr}}, nil
}

// paymentRequiredInText reads the terms in a content item's text: the text as JSON, else the span from
// its first "{" to its last "}" when it offers accepts (Python's x402MCPSession's fallback).
func paymentRequiredInText(text string) (*x402.PaymentRequired, error) {
	t := strings.TrimSpace(text)
	if strings.HasPrefix(t, "{") && jsonscan.Valid([]byte(t)) {
		return paymentRequiredOf([]byte(t))
	}
	if !strings.Contains(t, "accepts") {
		return nil, nil
	}
	i, j := strings.Index(t, "{"), strings.LastIndex(t, "}")
	if i < 0 || j < i {
		return nil, fmt.Errorf("text offers accepts in no readable JSON object")
	}
	pr, err := paymentRequiredOf([]byte(t[i : j+1]))
	if err != nil {
		return nil, err
	}
	if pr == nil {
		return nil, fmt.Errorf("text offers accepts in no readable x402 object")
	}
	return pr, nil
}

// paymentRequiredOf reads raw as payment terms when an x402 client would: an object with x402Version (or
// Python's x402_version) and a non-empty accepts. nil, nil: no terms. An object that names a version but
// cannot be read strictly is an error.
func paymentRequiredOf(raw []byte) (*x402.PaymentRequired, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return nil, nil
	}
	if err := checkStrict(raw); err != nil {
		if mentionsX402(raw) {
			return nil, err
		}
		return nil, nil
	}
	obj, _ := strictObject(raw)
	_, camel := obj["x402Version"]
	_, snake := obj["x402_version"]
	if !camel && !snake {
		return nil, nil
	}
	if snake {
		// Python's client reads x402_version as x402Version (and defaults a null one to 2).
		v := obj["x402_version"]
		if string(bytes.TrimSpace(v)) == "null" {
			v = []byte("2")
		}
		var err error
		if raw, err = withMembers(raw, map[string][]byte{"x402_version": nil, "x402Version": v}); err != nil {
			return nil, err
		}
	}
	if elems, ok := jsonscan.Array(bytes.TrimSpace(obj["accepts"])); !ok || len(elems) == 0 {
		return nil, nil // nothing to pay: no client pays from it
	}
	pr, err := x402.ParsePaymentRequired(raw)
	if err != nil {
		return nil, err
	}
	return pr, nil
}

// rewriteSites writes every site's terms as f makes them (narrowed, or emptied), and returns the message.
func rewriteSites(raw []byte, result, rpcErr jsonObject, sites []prSite, f func(*x402.PaymentRequired) *x402.PaymentRequired) ([]byte, error) {
	msg, _ := strictObject(raw) // the message's own bytes of result or error, rewritten member by member
	enc := func(pr *x402.PaymentRequired) ([]byte, error) { return json.Marshal(f(pr)) }
	if rpcErr != nil {
		b, err := enc(sites[0].pr)
		if err != nil {
			return nil, err
		}
		e, err := withMembers(msg["error"], map[string][]byte{"data": b})
		if err != nil {
			return nil, err
		}
		return withMembers(raw, map[string][]byte{"error": e})
	}
	set := map[string][]byte{}
	items, _ := jsonscan.Array(bytes.TrimSpace(result["content"]))
	contentChanged := false
	for _, s := range sites {
		b, err := enc(s.pr)
		if err != nil {
			return nil, err
		}
		switch s.kind {
		case "structured":
			set["structuredContent"] = b
		case "text":
			item, err := withMembers(items[s.item], map[string][]byte{"text": appendJSONString(nil, string(b))})
			if err != nil {
				return nil, err
			}
			items[s.item], contentChanged = item, true
		}
	}
	if contentChanged {
		set["content"] = append(append([]byte{'['}, bytes.Join(items, []byte{','})...), ']')
	}
	res, err := withMembers(msg["result"], set)
	if err != nil {
		return nil, err
	}
	return withMembers(raw, map[string][]byte{"result": res})
}

// refusedMessage replaces the terms' message with the refusal: a tool error result (isError, the refusal
// body as structuredContent and as JSON text), or for a JSON-RPC error 402 an error with the refusal as data.
// Either way no x402 client finds terms to pay in it, and the person reads decision, reasons and receipt.
func refusedMessage(raw []byte, asError bool, v verdict, p *Proxy) ([]byte, error) {
	body, _ := refusalOf(v, p.opts.RetryAfter)
	b, err := marshalJSON(body)
	if err != nil {
		return nil, err
	}
	if asError {
		msg := body.Message + ": " + strings.Join(body.Reasons, "; ")
		e := []byte(fmt.Sprintf(`{"code":%d,"message":`, mcpRefusalCode))
		e = appendJSONString(e, msg)
		e = append(append(append(e, `,"data":`...), b...), '}')
		return withMembers(raw, map[string][]byte{"error": e})
	}
	res := []byte(`{"content":[{"type":"text","text":`)
	res = appendJSONString(res, string(b))
	res = append(res, `}],"isError":true,"structuredContent":`...)
	res = append(append(res, b...), '}')
	return withMembers(raw, map[string][]byte{"result": res})
}

// recordMCPSettlement reads result._meta["x402/payment-response"] of the answer to a payment payguard
// released, and commits its reservation as a PAYMENT-RESPONSE header would (success only; anything else
// keeps it reserved).
func (p *Proxy) recordMCPSettlement(req *http.Request, st *reqState, result jsonObject) {
	r := st.release
	st.release = nil // one settlement per released payment
	meta, _ := strictObject(result["_meta"])
	raw, ok := meta[metaPaymentResponse]
	tool := st.mcp.paid.tool
	endpoint := mcpEndpoint(req.URL.Host, tool)
	if !ok {
		p.metrics.settlements.WithLabelValues("none", schemeOf(r)).Inc()
		p.log.Info("settlement", "result", "none", "transport", "mcp", "tool", tool, "reservation_id", r.ReservationID,
			"amount_usd", usdString(r.AmountMicros))
		p.observePaidAt(mcpMethod, endpoint, st.paid, http.StatusOK, settled{})
		return
	}
	var s x402.SettleResponse
	err := json.Unmarshal(raw, &s)
	out := p.commitSettlement(req.Context(), r, &s, err)
	p.observePaidAt(mcpMethod, endpoint, st.paid, http.StatusOK, out)
}
