package proxy

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"

	"github.com/elazarl/goproxy"
)

// Agents identify themselves with Proxy-Authorization (Basic agent-id:secret): on each plain HTTP request,
// and on the CONNECT of an HTTPS connection, whose identity then covers every request MITM'd inside it.
// The header is hop-by-hop: it is removed from every request before anything goes upstream. Which agent a
// request is decides its rules, its cap and its mode, and is named in the log line, the receipt's context,
// the hold, the console, webhooks and metrics.

type agentKey struct{}

// connAgent rides in a CONNECT's goproxy UserData, which goproxy copies to each request MITM'd inside it.
type connAgent struct{ id string }

// withAgent is ctx carrying the agent id a decision is made for.
func withAgent(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, agentKey{}, id)
}

// agentIDOf is the agent id ctx carries ("default" when none: the in-process guards and tests that never
// authenticate are the default identity, if the rule set has one).
func agentIDOf(ctx context.Context) string {
	if id, ok := ctx.Value(agentKey{}).(string); ok && id != "" {
		return id
	}
	return DefaultAgent
}

// ruleSet is the active rule set (one atomic load; see RuleSet).
func (p *Proxy) ruleSet() *RuleSet { return p.rs.Load() }

// authConnect authenticates a CONNECT. A refused one is answered 407 and closed before any TLS.
func (p *Proxy) authConnect(ctx *goproxy.ProxyCtx) (string, bool) {
	a, ok := p.ruleSet().authenticate(ctx.Req.Header)
	if !ok {
		return "", false
	}
	ctx.UserData = &connAgent{id: a.id}
	return a.id, true
}

// reject407 is the CONNECT hijack that answers 407 and closes.
func (p *Proxy) reject407(req *http.Request, client net.Conn, ctx *goproxy.ProxyCtx) {
	defer client.Close()
	p.metrics.agentRefused.Inc()
	p.log.Warn("agent refused", "reason", "proxy authentication required", "client", req.RemoteAddr, "host", req.Host)
	resp := proxyAuthRequired(req)
	_ = resp.Write(client)
}

// proxyAuthRequired is the 407 an unauthenticated (or wrongly authenticated) agent gets.
func proxyAuthRequired(req *http.Request) *http.Response {
	body := "payguard: proxy authentication required: send Proxy-Authorization: Basic <agent-id:secret> (payguard agents add)\n"
	resp := &http.Response{StatusCode: http.StatusProxyAuthRequired, Status: "407 Proxy Authentication Required",
		ProtoMajor: 1, ProtoMinor: 1, Request: req, Header: http.Header{},
		Body: io.NopCloser(strings.NewReader(body)), ContentLength: int64(len(body)), Close: true}
	resp.Header.Set("Proxy-Authenticate", `Basic realm="payguard"`)
	resp.Header.Set("Content-Type", "text/plain; charset=utf-8")
	return resp
}

// requestAgent is the agent of a proxied request: the CONNECT's for a MITM'd one, else its own
// Proxy-Authorization. ok false: answer 407. The header is removed either way.
func (p *Proxy) requestAgent(req *http.Request, ctx *goproxy.ProxyCtx) (string, bool) {
	defer req.Header.Del("Proxy-Authorization")
	if c, ok := ctx.UserData.(*connAgent); ok {
		return c.id, true
	}
	if req.URL != nil && req.URL.Scheme == "https" {
		// A MITM'd request whose CONNECT carried no identity cannot exist (authConnect sets one or refuses).
		return "", false
	}
	a, ok := p.ruleSet().authenticate(req.Header)
	if !ok {
		return "", false
	}
	return a.id, true
}
