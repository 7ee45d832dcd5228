// Package server is `payguard serve`: the public pay-per-call screening API of SPEC §8.1 (GET /v1/check,
// POST /v1/preflight, GET /v1/endpoint), its free documents, and the seam where MCP is mounted.
//
// MCP is mounted with Server.Mount("/mcp", handler). It sells the same operations through the same pieces:
// Trial() (one counter), Seller() (Begin → work → Charge.Settle, with fees.PaymentFromJSON for
// _meta["x402/payment"]), Offer(path) for the price, Preflight() and Checker() for the work.
//
// Every paid route works in one order: limits and input validation (4xx, never charged) → data
// availability (503, never charged) → free trial or x402 payment (verified, not settled) → the work → if
// the work could not be done, 503 and nothing is settled → settle → 200 with the settlement header.
package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/payguard/payguard/config"
	"github.com/payguard/payguard/policy"
	"github.com/payguard/payguard/screening"
	"github.com/payguard/payguard/server/fees"
	"github.com/payguard/payguard/server/trial"
	"github.com/payguard/payguard/store"
)

// ServiceVersion is the service and OpenAPI description version (SPEC §8.7 Versioning).
const ServiceVersion = "1.0.0"

// Prices in atomic USDC units (6 decimals), as SPEC §8.1 sets them.
const (
	PriceCheck     uint64 = 10000 // $0.01
	PricePreflight uint64 = 20000 // $0.02
	PriceEndpoint  uint64 = 5000  // $0.005
)

// ErrSigningUnavailable is what a Preflight returns when the decision cannot be signed (503
// receipt_signing_unavailable, nothing settled). The wiring maps preflight.ErrSigningUnavailable to it.
var ErrSigningUnavailable = errors.New("server: receipt signing unavailable")

// InputError is a request body rejected by the preflight input parser: 400 with Code, nothing charged.
// The wiring converts preflight's *InputError to it.
type InputError struct {
	Code    string // e.g. invalid_json, too_deep, invalid_utf8, field_too_long, too_many_options
	Message string
	Status  int // 0 means 400; 413 for body_too_large
}

func (e *InputError) Error() string { return e.Code + ": " + e.Message }

// Preflight is the decision engine behind POST /v1/preflight (preflight.ParseInput and Engine.Decide).
type Preflight interface {
	// Parse checks a body against SPEC §10's limits; errors are *InputError.
	Parse(body []byte) (any, error)
	// Decide decides a parsed input. An error wrapping ErrSigningUnavailable means 503.
	Decide(ctx context.Context, input any) (*Decision, error)
}

// Decision is a preflight result ready to render.
type Decision struct {
	Body      any    // the PreflightResult (with receipt and data_as_of), encoded as the 200 body
	Decision  string // allow | hold | block, for the log line
	ReceiptID string // for the log line
}

// CheckQuery is the input of GET /v1/check.
type CheckQuery struct{ Name, Address, Domain string }

// Checker screens a payee (screening.Checker). The result is the CheckResult, encoded as the 200 body.
type Checker interface {
	// Validate checks a query before payment; errors are *InputError (400, nothing charged).
	Validate(q CheckQuery) error
	Check(ctx context.Context, q CheckQuery) (any, error)
}

// SanctionsStatus is the freshness of the loaded sanctions list (screening.Sanctions satisfies it).
type SanctionsStatus interface {
	Ready() bool
	DataAsOf() time.Time
}

// Options wires a Server.
type Options struct {
	Config    config.ServerConfig
	Rules     policy.Rules // the deployment's rules, served at /v1/rules/default
	Seller    *fees.Seller
	Trial     *trial.Gate
	Endpoints store.Endpoints
	Preflight Preflight
	Checker   Checker
	Sanctions SanctionsStatus
	// RefreshHealth reports the sanctions refresher's state for /health (nil: not reported).
	RefreshHealth func() any
	// JWKS returns the receipt keys' public JWK Set (/.well-known/payguard-keys.json).
	JWKS func() ([]byte, error)
	// FacilitatorURL is shown in /status and the payment discovery document.
	FacilitatorURL string
	// Metrics receives the payguard_server_* series (nil: not exported). Never the global registry.
	Metrics prometheus.Registerer
	Logger  *slog.Logger
	Now     func() time.Time
}

// Server is the HTTP API. Create it with New; serve Handler().
type Server struct {
	opt       Options
	mux       *http.ServeMux
	trusted   []netip.Prefix
	log       *slog.Logger
	now       func() time.Time
	started   time.Time
	handler   http.Handler
	requests  atomic.Int64
	facHealth atomic.Pointer[facilitatorHealth]
	samples   sampleCache
	metrics   *metrics
	offers    map[string]fees.Offer // by paid route path
}

type facilitatorHealth struct {
	CheckedAt time.Time `json:"checked_at"`
	OK        bool      `json:"ok"`
	Error     string    `json:"error,omitempty"`
}

// New validates the options and builds the routes.
func New(o Options) (*Server, error) {
	if o.Seller == nil || o.Trial == nil || o.Endpoints == nil || o.Preflight == nil || o.Checker == nil ||
		o.Sanctions == nil || o.JWKS == nil {
		return nil, fmt.Errorf("server: Seller, Trial, Endpoints, Preflight, Checker, Sanctions and JWKS are required")
	}
	trusted, err := o.Config.TrustedProxyPrefixes()
	if err != nil {
		return nil, err
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	o.Config.BaseURL = strings.TrimRight(o.Config.BaseURL, "/")
	s := &Server{opt: o, mux: http.NewServeMux(), trusted: trusted, log: o.Logger, now: o.Now, started: o.Now(),
		metrics: newMetrics(o.Metrics)}
	s.offers = map[string]fees.Offer{}
	for _, r := range paidRoutes {
		s.offers[r.Path] = s.buildOffer(r)
	}
	s.routes()
	s.handler = s.middleware(s.canonical(s.mux))
	return s, nil
}

// Handler is the whole API with logging and panic recovery around it.
func (s *Server) Handler() http.Handler { return s.handler }

// Mount adds a handler under pattern (http.ServeMux syntax), e.g. Mount("/mcp", mcpHandler). The handler
// gets the same logging and recovery; call it before serving.
func (s *Server) Mount(pattern string, h http.Handler) { s.mux.Handle(pattern, h) }

// Seller is the fee seller, for channels (MCP) that charge through the same payment path.
func (s *Server) Seller() *fees.Seller { return s.opt.Seller }

// Trial is the shared free-trial gate (one counter for HTTP and MCP).
func (s *Server) Trial() *trial.Gate { return s.opt.Trial }

// Preflight is the decision engine behind /v1/preflight, for MCP's preflight_payment.
func (s *Server) Preflight() Preflight { return s.opt.Preflight }

// Checker is the payee checker behind /v1/check, for MCP's check_payee.
func (s *Server) Checker() Checker { return s.opt.Checker }

// DataAsOf is the sanctions data's time as every response states it.
func (s *Server) DataAsOf() string { return s.dataAsOf() }

// SanctionsRefresh is the sanctions refresher's state as /health reports it; nil when the list is not
// refreshed (a fixed --sanctions-dir, --offline).
func (s *Server) SanctionsRefresh() any {
	if s.opt.RefreshHealth == nil {
		return nil
	}
	return s.opt.RefreshHealth()
}

// ClientIP is the caller's address as the trial counts it (socket peer, or X-Forwarded-For through
// trusted proxies).
func (s *Server) ClientIP(r *http.Request) string { return clientIP(r, s.trusted) }

// Offer is the fee offer of a paid route path ("/v1/check", "/v1/preflight", "/v1/endpoint"), for channels
// that sell the same operation (MCP uses its own resource URL but the same price).
func (s *Server) Offer(path string) (fees.Offer, bool) {
	for _, r := range paidRoutes {
		if r.Path == path {
			return s.offer(r), true
		}
	}
	return fees.Offer{}, false
}

// HTTPServer is an http.Server for this handler with the edge limits set: headers within 10 s, 64 KiB of
// headers, bodies read under a per-request deadline (see readBody), writes bounded so that a facilitator's
// verify and settle timeouts fit.
func (s *Server) HTTPServer() *http.Server {
	fee := s.opt.Config.Fees
	return &http.Server{
		Addr:              s.opt.Config.Listen,
		Handler:           s.handler,
		ReadHeaderTimeout: BodyReadTimeout,
		WriteTimeout:      BodyReadTimeout + time.Duration(fee.VerifyTimeout) + time.Duration(fee.SettleTimeout) + 30*time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
}

// CheckFacilitator asks the facilitator's /supported once and records whether it covers our network in
// both x402 versions; /status shows the result. It never blocks startup: a facilitator that is down now
// makes paid calls answer 503 facilitator_unavailable until it is back.
func (s *Server) CheckFacilitator(ctx context.Context, f *fees.Facilitator) error {
	h := &facilitatorHealth{CheckedAt: s.now().UTC(), OK: true}
	sup, err := f.GetSupported(ctx)
	t := s.opt.Seller.Terms()
	switch {
	case err != nil:
		h.OK, h.Error = false, err.Error()
	case !sup.Covers(2, "exact", t.Network):
		h.OK, h.Error = false, "facilitator does not support exact on "+t.Network+" (x402 v2)"
	case t.NetworkV1 != "" && !sup.Covers(1, "exact", t.NetworkV1):
		h.OK, h.Error = false, "facilitator does not support exact on "+t.NetworkV1+" (x402 v1)"
	}
	s.facHealth.Store(h)
	if !h.OK {
		return errors.New(h.Error)
	}
	return nil
}

// dataAsOf is the sanctions data's time, RFC 3339 UTC. While no list is loaded it is
// screening.DataAsOfUnknown (the Unix epoch: a valid date-time older than anything), as in CheckResult.
func (s *Server) dataAsOf() string {
	if !s.opt.Sanctions.Ready() {
		return screening.DataAsOfUnknown
	}
	return s.opt.Sanctions.DataAsOf().UTC().Format(time.RFC3339)
}

// absURL is base_url + path.
func (s *Server) absURL(path string) string { return s.opt.Config.BaseURL + path }

// rawJSON is a pre-encoded JSON value.
type rawJSON = json.RawMessage
