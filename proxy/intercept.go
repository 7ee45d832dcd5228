package proxy

import (
	"context"
	"net/http"
	"time"

	"github.com/elazarl/goproxy"
	"github.com/payguard/payguard/internal/errbody"
	"github.com/payguard/payguard/x402"
)

// Headers payguard adds; every X-Payguard-* header from upstream is removed so sellers cannot forge them.
const (
	HeaderDecision = "X-Payguard-Decision"
	HeaderReceipt  = "X-Payguard-Receipt"
	HeaderHold     = "X-Payguard-Hold"
	headerPrefix   = "X-Payguard-"
)

// reqState travels from the request handler to the response handler in goproxy's ProxyCtx.UserData.
type reqState struct {
	start   time.Time
	local   bool              // the response was made by payguard, not by the upstream
	release *release          // a payment was released upstream; its settlement is recorded
	paid    *x402.Requirement // the option that payment was released for (observed with the answer)
	upgrade bool              // the request asked to switch protocols (and the policy let it go)
	mcp     *mcpRequest       // the request's body is JSON-RPC (mcp.go): its answers are followed
}

func stateOf(ctx *goproxy.ProxyCtx) *reqState {
	if st, ok := ctx.UserData.(*reqState); ok {
		return st
	}
	st := &reqState{start: time.Now()}
	ctx.UserData = st
	return st
}

// onRequest runs for every proxied request (plain HTTP and MITM'd HTTPS, upgrades included). Requests that
// carry a payment are released only when they match an allowed decision.
func (p *Proxy) onRequest(req *http.Request, ctx *goproxy.ProxyCtx) (*http.Request, *http.Response) {
	agent, known := p.requestAgent(req, ctx) // agents.go: reads (and removes) Proxy-Authorization
	st := &reqState{start: p.opts.Now()}
	ctx.UserData = st
	ctx.RoundTripper = p.rt
	if !known {
		st.local = true
		p.metrics.agentRefused.Inc()
		return req, proxyAuthRequired(req)
	}
	if agent != DefaultAgent || agentIDOf(req.Context()) != DefaultAgent {
		// In place: goproxy's ctx.Req is this request. The default agent is what a context without one
		// already says, so it costs the request no copy (issue 36: pass-through level with goproxy).
		*req = *req.WithContext(withAgent(req.Context(), agent))
	}
	// Decision headers are payguard's to set: an agent's (or a page's) X-Payguard-* never reaches a seller.
	stripPayguardHeaders(req.Header)
	// Request trailers are not passed upstream: one arrives after the body, when the request is already on
	// its way, so a payment sent as a trailer would reach the seller unchecked. One that declares a payment
	// trailer is refused; any other request goes on without its trailers (rare in HTTP/1.1 requests).
	paymentTrailer := false
	for name := range req.Trailer {
		paymentTrailer = paymentTrailer || isPaymentHeader(name)
	}
	req.Trailer = nil
	header, value, spelling := requestPayment(req.Header)
	upgradeRefused := ""
	if st.upgrade = isUpgradeRequest(req); st.upgrade {
		upgradeRefused = p.upgradeRefusal(req)
	}
	var out verdict
	var mcpOut *verdict // an MCP payment in the body, or a body refused (mcp.go)
	logReq := req
	if !paymentTrailer && spelling == "" && upgradeRefused == "" {
		var tool string
		if mcpOut, tool = p.checkMCPRequest(req, st); tool != "" {
			logReq = mcpLogRequest(req, tool)
		}
	}
	switch {
	case paymentTrailer:
		out = failClosed("payment_malformed", "a payment header sent as a request trailer is not checked, so it is refused")
	case spelling != "":
		out = failClosed("header_spelling", spelling)
	case upgradeRefused != "":
		out = failClosed("upgrade_refused", upgradeRefused)
	case mcpOut != nil && header != "":
		out = failClosed("payment_malformed", "request carries both a payment header and an x402 payment in its body")
	case mcpOut != nil:
		out = *mcpOut
	case header == "":
		return req, nil
	default:
		out = p.checkPayment(req, header, value)
	}
	stage := "payment"
	if out.Class == "upgrade_refused" {
		stage = "upgrade"
	}
	p.logDecision(stage, logReq, out, st.start)
	if out.Decision == allow && out.Release != nil {
		st.release, st.paid = out.Release, out.Option
		p.metrics.paymentsReleased.WithLabelValues(out.Release.Via, schemeOf(out.Release)).Inc()
		return req, nil
	}
	if stage == "payment" {
		p.metrics.paymentsRefused.WithLabelValues(out.Class).Inc()
	}
	st.local = true
	if st.mcp != nil {
		return req, mcpRefusal(req, st.mcp, out, p.opts.RetryAfter)
	}
	return req, refusal(req, out, p.opts.RetryAfter)
}

// roundTrip sends a request upstream. A failure is counted and answered with 502 here, so the agent gets a
// response in MITM'd connections too (goproxy would otherwise just close the connection).
func (p *Proxy) roundTrip(req *http.Request, ctx *goproxy.ProxyCtx) (*http.Response, error) {
	resp, err := p.tr.RoundTrip(req)
	if err != nil {
		p.metrics.upstreamErrors.Inc()
		e := upstreamError(req.URL.Host, err)
		p.log.Warn("upstream error", "method", req.Method, "host", req.URL.Host, "error", e.Code,
			"cause", err.Error(), "hint", e.Hint)
		stateOf(ctx).local = true
		return errorResponse(req, http.StatusBadGateway, e), nil
	}
	if resp.StatusCode == http.StatusPaymentRequired || stateOf(ctx).mcp.inspectsAnswers() {
		holdBody(resp) // a body the guard may rewrite is rewritten in place, so it keeps its length (challenge.go)
	}
	return resp, nil
}

// onResponse strips forged decision headers, records settlements and guards 402 challenges.
func (p *Proxy) onResponse(resp *http.Response, ctx *goproxy.ProxyCtx) *http.Response {
	st := stateOf(ctx)
	if st.local {
		return resp
	}
	if resp == nil {
		p.metrics.upstreamErrors.Inc()
		return errorResponse(ctx.Req, http.StatusBadGateway, errbody.Error{Code: "upstream_failed",
			Message: "the upstream request failed before a response", Hint: "see payguard's log for the cause"})
	}
	stripPayguardHeaders(resp.Header)
	guardTrailers(resp)
	if out := p.guardSwitch(resp, ctx, st); out != nil {
		return out
	}
	if resp.StatusCode == http.StatusPaymentRequired {
		p.sellerAnswered402(ctx.Req)
	}
	if why := responseX402Spelling(resp.Header); why != "" {
		// payguard reads the canonical header (the settlement it commits, the challenge it judges); an agent
		// must not act on another spelling. A released payment's reservation stays (outcome unknown).
		resp.Body.Close()
		out := failClosed("header_spelling", why)
		p.logDecision("response", ctx.Req, out, st.start)
		st.local = true
		return refusal(ctx.Req, out, p.opts.RetryAfter)
	}
	if st.release != nil {
		if st.mcp == nil || st.mcp.paid == nil {
			out := p.recordSettlement(ctx.Req.Context(), st.release, resp)
			p.observePaid(ctx.Req, st.paid, resp.StatusCode, out)
			setSettlementHeaders(resp.Header, st.release, out)
		} // an MCP payment's settlement is in the answer's body (guardMCPAnswer)
		resp.Header.Set(HeaderDecision, allow)
		if st.release.ReceiptID != "" {
			resp.Header.Set(HeaderReceipt, st.release.ReceiptID)
		}
	}
	if resp.StatusCode == http.StatusPaymentRequired {
		return p.guardChallenge(ctx.Req, resp, st)
	}
	return p.guardMCPAnswer(ctx.Req, resp, st)
}

// guardChallenge decides a 402 before the agent sees it.
func (p *Proxy) guardChallenge(req *http.Request, resp *http.Response, st *reqState) *http.Response {
	pr, entry, body, src, why := readChallenge(resp, p.challenges)
	switch src {
	case notX402:
		p.metrics.nonX402.Inc()
		return resp
	case undecodable:
		out := failClosed("challenge_malformed", why)
		p.logDecision("challenge", req, out, st.start)
		resp.Body.Close()
		return refusal(req, out, p.opts.RetryAfter)
	}
	url := req.URL.String()                           // once: the decision and the observation key on it
	defer p.observeChallengeAt(req.Method, url, pr)() // recorded after the decision: it never judges this challenge against itself
	if st.release != nil {
		// The seller refused or failed a payment payguard released. Its fresh challenge is passed on with
		// nothing left to pay: the agent learns why (error is kept) and pays again only through a new
		// request, which is decided afresh; no second amount is reserved for a payment that failed.
		if err := emptyChallenge(resp, pr, body, src); err != nil {
			resp.Body.Close()
			return refusal(req, failClosed("challenge_malformed", "challenge after a failed payment could not be rewritten: "+err.Error()), p.opts.RetryAfter)
		}
		p.metrics.paymentsFailed.Inc()
		return resp
	}
	out := p.decideChallenge(req.Context(), req.Method, url, pr, entry)
	var hv headerValues
	if out.Decision == allow {
		// The reservation and the ticket are written; a challenge that cannot be narrowed is refused and its
		// ticket expires unused (the reservation stays, like any abandoned payment's).
		if err := narrowResponse(resp, pr, entry, out.Chosen, body, src, &hv); err != nil {
			out = failClosed("challenge_malformed", "allowed challenge could not be narrowed: "+err.Error())
		}
	}
	p.logDecision("challenge", req, out, st.start)
	if out.Decision != allow {
		resp.Body.Close()
		return refusal(req, out, p.opts.RetryAfter)
	}
	hv.set(resp.Header, HeaderDecision, allow)
	if out.Shadow != "" {
		hv.set(resp.Header, ShadowHeader, out.Shadow) // shadow.go
	}
	if id := out.receiptID(); id != "" {
		hv.set(resp.Header, HeaderReceipt, id)
	}
	if out.Hold != nil {
		hv.set(resp.Header, HeaderHold, out.Hold.ID)
	}
	return resp
}

// headerValues sets headers to one value each from one allocation (http.Header.Set makes a slice per
// header: issue 36 counted three per allowed 402). Each value slice is capped at its one element, so an
// Add to one header never writes into the next's.
type headerValues struct{ free []string }

func (hv *headerValues) set(h http.Header, key, value string) {
	if len(hv.free) == 0 {
		hv.free = make([]string, 4)
	}
	hv.free[0] = value
	h[http.CanonicalHeaderKey(key)] = hv.free[0:1:1]
	hv.free = hv.free[1:]
}

// decideChallenge is the one decision of a challenge, whatever carried it (a 402 here, an MCP result in
// mcp.go): the engine, and for a hold the person; on allow the amount is reserved and a ticket minted for
// method and url. entry, when not nil, is the memo's entry pr is an unchanged view of (readChallenge).
func (p *Proxy) decideChallenge(ctx context.Context, method, url string, pr *x402.PaymentRequired, entry *memoChallenge) verdict {
	out := p.decideWith(ctx, method, url, pr, true, entry)
	if out.Decision == hold && out.Result != nil {
		out = p.resolveHold(ctx, method, url, pr, out)
	}
	return out
}
