package server

import (
	"context"
	"fmt"
	"html/template"
	"net/http"
	"os"
	"strings"

	"github.com/payguard/payguard/config"
	"github.com/payguard/payguard/internal/buildinfo"
)

// What an operator and a person meet first: the page at /, the operator's own terms and privacy texts, and
// whether paid calls would work right now (/health, /readyz, /status, the start banner).

// maxOperatorText bounds a terms or privacy file: it is served on every request from memory.
const maxOperatorText = 256 << 10

// operatorTexts are the operator's terms and privacy notice (server.terms_file, server.privacy_file), or ""
// for the built-in text.
type operatorTexts struct{ terms, privacy string }

func (o operatorTexts) or(text, builtin string) string {
	if text != "" {
		return text
	}
	return builtin
}

func readOperatorTexts(c config.ServerConfig) (operatorTexts, error) {
	var o operatorTexts
	for _, f := range []struct {
		key, path string
		dst       *string
	}{{"server.terms_file", c.TermsFile, &o.terms}, {"server.privacy_file", c.PrivacyFile, &o.privacy}} {
		if f.path == "" {
			continue
		}
		b, err := os.ReadFile(f.path)
		if err != nil {
			return o, fmt.Errorf("%s: %w", f.key, err)
		}
		if len(b) == 0 || len(b) > maxOperatorText {
			return o, fmt.Errorf("%s: %s is %d bytes (want 1 to %d)", f.key, f.path, len(b), maxOperatorText)
		}
		*f.dst = string(b)
	}
	return o, nil
}

// PaidCalls says whether a paid call would be answered right now, and if not, why: no sanctions list (503
// sanctions_data_unavailable), a store that cannot record it, or a facilitator that was unreachable or does
// not settle on the fee network at its last check (503 facilitator_unavailable). Before the first check
// the facilitator is taken as working (it is checked at start).
func (s *Server) PaidCalls(ctx context.Context) (ok bool, why string) {
	var problems []string
	if !s.opt.Sanctions.Ready() {
		problems = append(problems, "no sanctions list loaded (503 sanctions_data_unavailable)")
	}
	if s.opt.StoreHealth != nil {
		if err := s.opt.StoreHealth(ctx); err != nil {
			problems = append(problems, "the store cannot record a paid call: "+err.Error())
		}
	}
	if h := s.facHealth.Load(); h != nil && !h.OK {
		problems = append(problems, "facilitator "+s.opt.FacilitatorURL+" failed its last check ("+h.Error+"): paid calls answer 503 facilitator_unavailable")
	}
	if len(problems) == 0 {
		return true, ""
	}
	return false, strings.Join(problems, "; ")
}

// paidCallsField is the paid_calls member of /health, /readyz and /status.
func (s *Server) paidCallsField(ctx context.Context) map[string]any {
	ok, why := s.PaidCalls(ctx)
	if ok {
		return map[string]any{"ok": true}
	}
	return map[string]any{"ok": false, "why": why}
}

// facilitatorDown reports whether the last facilitator check failed.
func (s *Server) facilitatorDown() bool {
	h := s.facHealth.Load()
	return h != nil && !h.OK
}

// versions are the two versions /status distinguishes: the HTTP API's (its contract, as in openapi.json)
// and the build's (this binary).
func versions() map[string]any {
	return map[string]any{"api_version": ServiceVersion, "build": buildinfo.Read()}
}

var homePage = template.Must(template.New("home").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>payguard: payee screening and spend preflight for AI agents</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:46rem;margin:2rem auto;padding:0 1rem;color:#222}
code{background:#f3f3f3;padding:0 .2em}li{margin:.3em 0}.bad{color:#a00}.ok{color:#060}</style>
</head>
<body>
<h1>payguard</h1>
<p>A pay-per-call screening service for AI agents that pay with <a href="https://x402.org">x402</a>: it screens a
payee (OFAC sanctions list, domain age and DNS) and decides whether an agent's payment should happen
(<code>allow</code>, <code>hold</code> or <code>block</code>, with a signed receipt). Each call is paid in USDC on
<code>{{.Network}}</code> to <code>{{.PayTo}}</code>; <code>?trial=1</code> gives {{.TrialLimit}} free calls a day.</p>
<p id="paid-calls">Paid calls right now: {{if .PaidOK}}<span class="ok">working</span>{{else}}<span class="bad">failing: {{.PaidWhy}}</span>{{end}}.
Sanctions data as of {{.DataAsOf}}.</p>
<h2>For people and for agents</h2>
<ul>
<li><a href="/llms.txt">/llms.txt</a>: what the service does and costs, in plain text</li>
<li><a href="/openapi.json">/openapi.json</a>: the HTTP API (OpenAPI 3.1, API version {{.APIVersion}})</li>
<li><a href="/.well-known/mcp.json">/.well-known/mcp.json</a>: the MCP server at <code>{{.MCP}}</code></li>
<li><a href="/.well-known/x402">/.well-known/x402</a>: prices and payment terms</li>
<li><a href="/v1/sample">/v1/sample</a>: free sample answers</li>
<li><a href="/status">/status</a> and <a href="/health">/health</a>: the service's state</li>
<li><a href="/terms">Terms</a> · <a href="/privacy">Privacy</a> · <a href="/.well-known/security.txt">security.txt</a></li>
</ul>
<p>Operated by <a href="{{.Contact}}">{{.Contact}}</a>. Build {{.Build}}.</p>
</body>
</html>
`))

// handleHome is the page a person opening the service's address in a browser gets.
func (s *Server) handleHome(w http.ResponseWriter, r *http.Request) {
	ok, why := s.PaidCalls(r.Context())
	t := s.opt.Seller.Terms()
	b := buildinfo.Read()
	data := map[string]any{
		"Network": t.Network, "PayTo": t.PayTo, "TrialLimit": s.opt.Trial.Limit(), "PaidOK": ok, "PaidWhy": why,
		"DataAsOf": s.dataAsOf(), "APIVersion": ServiceVersion, "MCP": s.absURL("/mcp"), "Build": b.Version,
		"Contact": template.URL(s.opt.Config.Contact),
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("X-Data-As-Of", s.dataAsOf())
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")
	if err := homePage.Execute(w, data); err != nil {
		s.log.Error("home page", "error", err.Error())
	}
}
