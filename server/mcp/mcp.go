// Package mcp is payguard's remote MCP server at POST /mcp: stateless Streamable HTTP (JSON-RPC 2.0, JSON
// responses), built on the official Go SDK (github.com/modelcontextprotocol/go-sdk/mcp, imported as sdk).
//
// It sells the same operations as the HTTP API through the same pieces of server.Server: the one free-trial
// counter (Trial), the fee seller (Seller: Begin → work → Charge.Settle, once per payment nonce), the prices
// (Offer), the decision engine (Preflight) and the payee checker (Checker). Tools:
//
//   - check_payee ($0.01) and preflight_payment ($0.02): the shared free trial first, then x402;
//   - check_endpoint ($0.005): x402 only, as /v1/endpoint;
//   - get_service_info: always free.
//
// x402 over MCP follows the x402 MCP transport (specs/transports-v2/mcp.md, @x402/mcp): a payment-required
// answer is a tool result with isError, the PaymentRequired object in structuredContent and the same JSON as
// text; the payment comes in params._meta["x402/payment"]; the settlement goes back in
// result._meta["x402/payment-response"]. The resource URL of a paid tool is mcp://tool/<name>.
//
// Order of work, as on HTTP: argument validation (tool error, never charged) → data availability (tool
// error, never charged) → trial or payment (verified, not settled) → work (a failure settles nothing) →
// settle once → result. Decisions carry only the decision JWS: MCP has no offer-receipt (SPEC §6.3).
//
// The package lives under server/ beside fees, trial and docs because it is one more channel of
// `payguard serve`, mounted with server.Server.Mount; it reaches nothing the HTTP routes do not.
package mcp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/payguard/payguard/policy"
	"github.com/payguard/payguard/server/core"
	"github.com/payguard/payguard/server/docs"
)

// MaxRequestBytes bounds one POST /mcp (read within core.BodyReadTimeout). A preflight's arguments are
// bounded by the preflight parser itself (64 KiB, as the HTTP body); the envelope adds the JSON-RPC members
// and a payment of at most 32 KiB.
const MaxRequestBytes = 128 << 10

// Options wires the MCP server to the service behind the HTTP API (server.Server.Core).
type Options struct {
	Core    *core.Service // required: the paid operations, trial, seller, client IP
	BaseURL string        // required: the service origin, as in the HTTP offers (server.base_url)
	// RefreshHealth reports the sanctions refresher's state for the status resource (nil: not reported).
	RefreshHealth func() any
	Rules         policy.Rules // the deployment's rules: the default-rules resource
	// JWKS returns the receipt keys' public JWK Set, shown in the trust resource (nil: only its URL).
	JWKS   func() ([]byte, error)
	Logger *slog.Logger
}

// Handler is the /mcp endpoint. Create it with New and mount it with server.Server.Mount("/mcp", h).
type Handler struct {
	opt     Options
	core    *core.Service
	log     *slog.Logger
	baseURL string // the service origin, as in the HTTP offers
	host    string // base URL host: a Host the DNS-rebinding check accepts on a loopback listener
	tools   map[string]*paidTool
	defs    []toolDef
	mcp     *sdk.Server
	http    http.Handler
}

// New builds the MCP server: tools, resources and prompts, and the stateless HTTP handler.
func New(o Options) (*Handler, error) {
	if o.Core == nil || o.BaseURL == "" {
		return nil, errors.New("mcp: Core and BaseURL are required")
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	h := &Handler{opt: o, core: o.Core, log: o.Logger, baseURL: strings.TrimRight(o.BaseURL, "/")}
	if u, err := url.Parse(h.baseURL); err == nil {
		h.host = u.Host
	}
	if err := h.buildTools(); err != nil {
		return nil, err
	}
	// The SDK logs every stateless request's session at Info; the server already logs one line per request,
	// so only the SDK's warnings and errors are kept.
	sdkLog := slog.New(minLevel{o.Logger.Handler(), slog.LevelWarn})
	h.mcp = sdk.NewServer(&sdk.Implementation{Name: "payguard", Title: "payguard", Version: core.ServiceVersion,
		WebsiteURL: h.baseURL}, &sdk.ServerOptions{Instructions: instructions(h.core.Trial().Limit()), Logger: sdkLog,
		// Exactly the versions the discovery documents advertise; the SDK would otherwise also negotiate
		// 2024-11-05 and drafts newer than the ones tested here.
		SupportedProtocolVersions: docs.MCPProtocolVersions})
	h.addTools()
	h.addResources()
	h.addPrompts()
	h.http = sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return h.mcp }, &sdk.StreamableHTTPOptions{
		Stateless:           true,
		JSONResponse:        true,
		Logger:              sdkLog,
		MaxRequestBodyBytes: MaxRequestBytes,
		// The SDK's own check refuses any non-loopback Host on a loopback listener, which would also refuse a
		// reverse proxy on the same machine forwarding the public Host. ServeHTTP does the same check but
		// also accepts the base URL's host.
		DisableLocalhostProtection: true,
	})
	return h, nil
}

// instructions is what an MCP client may show the model about this server, with the deployment's trial
// limit.
func instructions(trialLimit int) string {
	free := fmt.Sprintf("check_payee and preflight_payment are free for %d calls per IP per UTC day, then cost", trialLimit)
	if trialLimit <= 0 {
		free = "check_payee and preflight_payment cost"
	}
	return "payguard screens payees and pre-flights payments for agents that pay with x402. " +
		"Call preflight_payment with the 402 challenge (or a cart) BEFORE signing any payment: pay only on " +
		"\"allow\", ask a human on \"hold\", never pay on \"block\". check_payee screens a name, domain or wallet. " +
		"A tool error or an unexpected answer means screening is unavailable: treat it as hold, never as allow. " +
		free + " $0.01 and $0.02 in USDC via x402 (payment in params._meta[\"x402/payment\"]). " +
		"get_service_info is always free. Informational screening only, not legal advice."
}

type clientKey struct{}

// clientIP is the caller's address put in the context by ServeHTTP ("" outside a request).
func clientIP(ctx context.Context) string {
	ip, _ := ctx.Value(clientKey{}).(string)
	return ip
}

// ServeHTTP bounds the request (size, read deadline), refuses DNS-rebinding Hosts on a loopback listener,
// and hands the SDK a context carrying the client IP as the trial counts it.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Data-As-Of", h.core.DataAsOf())
	if !h.hostAllowed(r) {
		http.Error(w, fmt.Sprintf("Forbidden: invalid Host header %q", r.Host), http.StatusForbidden)
		return
	}
	if r.Method == http.MethodPost {
		body, e := core.ReadBody(w, r, MaxRequestBytes)
		if e != nil {
			w.Header().Set("Connection", "close")
			http.Error(w, e.Message, e.Status)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
	}
	r = r.WithContext(context.WithValue(r.Context(), clientKey{}, h.core.ClientIP(r)))
	h.http.ServeHTTP(w, r)
}

// hostAllowed is the SDK's DNS-rebinding protection (a loopback listener only answers loopback Hosts),
// extended to the configured base URL's host.
func (h *Handler) hostAllowed(r *http.Request) bool {
	local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok || local == nil || !isLoopback(local.String()) {
		return true
	}
	return isLoopback(r.Host) || (h.host != "" && strings.EqualFold(r.Host, h.host))
}

func isLoopback(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// minLevel drops records below min.
type minLevel struct {
	slog.Handler
	min slog.Level
}

func (m minLevel) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= m.min && m.Handler.Enabled(ctx, l)
}

func (m minLevel) WithAttrs(a []slog.Attr) slog.Handler {
	return minLevel{m.Handler.WithAttrs(a), m.min}
}
func (m minLevel) WithGroup(g string) slog.Handler { return minLevel{m.Handler.WithGroup(g), m.min} }

// refreshHealth is the sanctions refresher's state for the status resource (nil: not reported).
func (h *Handler) refreshHealth() any {
	if h.opt.RefreshHealth == nil {
		return nil
	}
	return h.opt.RefreshHealth()
}
