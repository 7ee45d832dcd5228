package server

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/payguard/payguard/server/core"
	"github.com/payguard/payguard/server/docs"
	"github.com/payguard/payguard/server/fees"
)

func (s *Server) routes() {
	m := s.mux
	m.HandleFunc("/v1/check", s.handleCheck)
	m.HandleFunc("/v1/preflight", s.handlePreflight)
	m.HandleFunc("/v1/endpoint", s.handleEndpoint)

	m.HandleFunc("/v1/sample", s.get(s.handleSample))
	m.HandleFunc("/v1/rules/default", s.get(s.handleRules))
	m.HandleFunc("/health", s.get(s.handleHealth))
	m.HandleFunc("/healthz", s.get(s.handleHealthz))
	m.HandleFunc("/readyz", s.get(s.handleReadyz))
	m.HandleFunc("/status", s.get(s.handleStatus))
	m.HandleFunc("/openapi.json", s.get(s.handleOpenAPI))
	m.HandleFunc("/llms.txt", s.get(func(w http.ResponseWriter, r *http.Request) {
		s.writeText(w, "text/plain; charset=utf-8", docs.LLMsTxt(s.docInfo()))
	}))
	m.HandleFunc("/.well-known/x402", s.get(func(w http.ResponseWriter, r *http.Request) {
		s.writeDoc(w, docs.X402Discovery(s.docInfo()))
	}))
	m.HandleFunc("/.well-known/agent-card.json", s.get(func(w http.ResponseWriter, r *http.Request) {
		s.writeDoc(w, docs.AgentCard(s.docInfo()))
	}))
	m.HandleFunc("/.well-known/mcp.json", s.get(func(w http.ResponseWriter, r *http.Request) {
		s.writeDoc(w, docs.MCPDiscovery(s.docInfo()))
	}))
	m.HandleFunc("/.well-known/payguard-keys.json", s.get(s.handleKeys))
	m.HandleFunc("/terms", s.get(func(w http.ResponseWriter, r *http.Request) {
		s.writeText(w, "text/plain; charset=utf-8", s.operator.or(s.operator.terms, docs.Terms(s.docInfo())))
	}))
	m.HandleFunc("/privacy", s.get(func(w http.ResponseWriter, r *http.Request) {
		s.writeText(w, "text/plain; charset=utf-8", s.operator.or(s.operator.privacy, docs.Privacy(s.docInfo())))
	}))
	m.HandleFunc("/.well-known/security.txt", s.get(func(w http.ResponseWriter, r *http.Request) {
		s.writeText(w, "text/plain; charset=utf-8", docs.SecurityTxt(s.docInfo(), s.now()))
	}))
	m.HandleFunc("/{$}", s.get(s.handleHome))
	m.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { s.writeError(w, s.notFound("")) })
}

// notFound is the 404 for a path the service does not serve; detail, if any, says why.
func (s *Server) notFound(detail string) *apiError {
	return errorf(http.StatusNotFound, core.CodeNotFound, "no such resource"+detail+"; see "+s.absURL("/openapi.json"))
}

// get wraps a free document handler: GET only.
func (s *Server) get(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if s.allowMethods(w, r, http.MethodGet) {
			h(w, r)
		}
	}
}

// writeDoc writes a JSON discovery document, adding data_as_of to it.
func (s *Server) writeDoc(w http.ResponseWriter, doc map[string]any) {
	doc["data_as_of"] = s.dataAsOf()
	s.writeJSON(w, http.StatusOK, doc)
}

// docInfo is what the documents are generated from: config, prices and terms, never placeholders.
func (s *Server) docInfo() docs.Info {
	t := s.opt.Seller.Terms()
	info := docs.Info{
		BaseURL:                 s.opt.Config.BaseURL,
		Version:                 ServiceVersion,
		Contact:                 s.opt.Config.Contact,
		Network:                 t.Network,
		NetworkV1:               t.NetworkV1,
		Asset:                   t.Asset,
		AssetName:               t.AssetName,
		PayTo:                   t.PayTo,
		MaxTimeoutSeconds:       t.MaxTimeoutSeconds,
		FacilitatorURL:          s.opt.FacilitatorURL,
		TrialLimit:              s.opt.Trial.Limit(),
		TrialRetention:          time.Duration(s.opt.Config.TrialRetention),
		IndexFreshness:          time.Duration(s.opt.Config.IndexFreshness),
		SettlementUnknownStatus: core.StatusSettlementOutcomeUnknown,
	}
	for _, r := range core.Routes {
		info.Paid = append(info.Paid, docs.PaidResource{
			Path: r.Path, Method: r.Method, Amount: r.Price, USD: fees.USD(r.Price),
			Description: r.Description, Trial: r.Trial, OfferReceipt: r.OfferReceipt,
		})
	}
	return info
}

func (s *Server) handleOpenAPI(w http.ResponseWriter, r *http.Request) {
	doc, err := docs.OpenAPI(s.docInfo())
	if err != nil {
		s.writeError(w, errorf(http.StatusInternalServerError, core.CodeInternal, "the OpenAPI document could not be built"))
		return
	}
	// The OpenAPI document is served as generated (no data_as_of member: it would not be a valid OpenAPI
	// object); its freshness is in the X-Data-As-Of header.
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Data-As-Of", s.dataAsOf())
	w.Write(doc)
}

func (s *Server) handleKeys(w http.ResponseWriter, r *http.Request) {
	jwks, err := s.opt.JWKS()
	if err != nil || !json.Valid(jwks) {
		s.writeError(w, errorf(http.StatusServiceUnavailable, core.CodeReceiptSigning, "the receipt keys are unavailable"))
		return
	}
	// A JWK Set is served as is; data_as_of is in the X-Data-As-Of header.
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "public, max-age=300")
	w.Header().Set("X-Data-As-Of", s.dataAsOf())
	w.Write(jwks)
}
