// Package server is `payguard serve`: the public pay-per-call screening API of SPEC §8.1 (GET /v1/check,
// POST /v1/preflight, GET /v1/endpoint), its free documents, and the seam where MCP is mounted.
//
// The paid operations themselves are package core's (server/core): this package parses HTTP input, asks
// core to prepare and sell the operation, and renders core's Outcome as an HTTP answer. MCP (server/mcp) is
// its sibling renderer of the same core, mounted here with Server.Mount("/mcp", handler).
//
// Every paid route works in one order: limits and input validation (4xx, never charged) → data
// availability (503, never charged) → free trial or x402 payment (verified, not settled) → the work → if
// the work could not be done, 503 and nothing is settled → settle → 200 with the settlement header.
package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/payguard/payguard/config"
	"github.com/payguard/payguard/policy"
	"github.com/payguard/payguard/server/core"
	"github.com/payguard/payguard/server/fees"
	"github.com/payguard/payguard/server/trial"
	"github.com/payguard/payguard/store"
	"github.com/payguard/payguard/x402"
)

// ServiceVersion is the service and OpenAPI description version (SPEC §8.7 Versioning).
const ServiceVersion = core.ServiceVersion

// Options wires a Server.
type Options struct {
	Config    config.ServerConfig
	Rules     policy.Rules // the deployment's rules, served at /v1/rules/default
	Seller    *fees.Seller
	Trial     *trial.Gate
	Endpoints store.Endpoints
	// Deliveries keeps each paid call's result for its payment (core.DeliveryWindow) so that the payer's
	// retry of the same payment gets it (SPEC §8.6); nil: in memory, one process.
	Deliveries store.Deliveries
	Preflight  core.Preflight
	Checker    core.Checker
	Sanctions  core.SanctionsStatus
	// StoreHealth is the store's health (store.Healthy): an error makes /health 503, as a full disk or a
	// wiped ledger refuses every paid call (nil: not reported).
	StoreHealth func(context.Context) error
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
	core      *core.Service
	operator  operatorTexts // server.terms_file and privacy_file (operator.go)
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
	// The facilitator URL is published: credentials in it are refused here too, not only by the config.
	if u, err := url.Parse(o.FacilitatorURL); err != nil || u.User != nil {
		return nil, fmt.Errorf("server: FacilitatorURL must be a URL without user:password@ (credentials go in a header)")
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
	s.core, err = core.New(core.Options{Seller: o.Seller, Trial: o.Trial, Endpoints: o.Endpoints, Preflight: o.Preflight,
		Checker: o.Checker, Sanctions: o.Sanctions, IndexFreshness: time.Duration(o.Config.IndexFreshness),
		TrustedProxies: trusted, Deliveries: o.Deliveries,
		SettleWait: time.Duration(o.Config.Fees.SettleTimeout) + 5*time.Second, CountPayment: s.countPayment, CountTrial: s.countTrial, Logger: o.Logger, Now: o.Now})
	if err != nil {
		return nil, err
	}
	if s.operator, err = readOperatorTexts(o.Config); err != nil {
		return nil, err
	}
	s.offers = map[string]fees.Offer{}
	for _, r := range core.Routes {
		s.offers[r.Path] = s.buildOffer(r)
	}
	s.routes()
	s.handler = s.middleware(s.canonical(s.mux))
	return s, nil
}

// Mount adds a handler under pattern (http.ServeMux syntax), e.g. Mount("/mcp", mcpHandler). The handler
// gets the same logging and recovery; call it before serving.
func (s *Server) Mount(pattern string, h http.Handler) { s.mux.Handle(pattern, h) }

// Core is the service running the paid operations, for the MCP server mounted beside the HTTP API (one
// trial counter, one seller, one set of metrics).
func (s *Server) Core() *core.Service { return s.core }

// RefreshHealth is the sanctions refresher's state as /health reports it; nil when the list is not
// refreshed (a fixed --sanctions-dir, --offline).
func (s *Server) RefreshHealth() any {
	if s.opt.RefreshHealth == nil {
		return nil
	}
	return s.opt.RefreshHealth()
}

// HTTPServer is an http.Server for this handler with the edge limits set: headers within 10 s, 64 KiB of
// headers, bodies read under a per-request deadline (see readBody), writes bounded so that a facilitator's
// verify and settle timeouts fit.
func (s *Server) HTTPServer() *http.Server {
	fee := s.opt.Config.Fees
	return &http.Server{
		Addr:              s.opt.Config.Listen,
		Handler:           s.handler,
		ReadHeaderTimeout: core.BodyReadTimeout,
		WriteTimeout:      core.BodyReadTimeout + time.Duration(fee.VerifyTimeout) + time.Duration(fee.SettleTimeout) + 30*time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    x402.MaxHeaderBytes,
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

// dataAsOf is the sanctions data's time as every answer states it (core.Service.DataAsOf).
func (s *Server) dataAsOf() string { return s.core.DataAsOf() }

// absURL is base_url + path.
func (s *Server) absURL(path string) string { return s.opt.Config.BaseURL + path }
