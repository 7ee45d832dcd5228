package server

import (
	"net/http"
	"sync"
	"time"

	"github.com/payguard/payguard/server/core"
)

// sampleQuery is the fixed query behind /v1/sample: a name and a wallet that are not listed, so the sample
// shows a complete low-risk answer computed by the real checker on the loaded data.
var sampleQuery = core.CheckQuery{Name: "Acme Widgets LLC", Address: "0x1111111111111111111111111111111111111111"}

// staleAfter is when sanctions data counts as stale in /health: SPEC §10 refreshes daily, so two missed
// refreshes.
const staleAfter = 48 * time.Hour

type sampleCache struct {
	mu       sync.Mutex
	dataAsOf string
	result   any
}

func (s *Server) handleSample(w http.ResponseWriter, r *http.Request) {
	asOf := s.dataAsOf()
	s.samples.mu.Lock()
	result, cached := s.samples.result, s.samples.dataAsOf == asOf && s.samples.result != nil
	s.samples.mu.Unlock()
	if !cached {
		if e := s.core.SanctionsGate(); e != nil {
			s.writeError(w, e)
			return
		}
		res, err := s.opt.Checker.Check(r.Context(), sampleQuery)
		if err != nil {
			s.writeError(w, errorf(http.StatusServiceUnavailable, core.CodeSanctionsUnavailable, "the sample could not be computed"))
			return
		}
		s.samples.mu.Lock()
		s.samples.dataAsOf, s.samples.result = asOf, res
		s.samples.mu.Unlock()
		result = res
	}
	s.writeJSON(w, http.StatusOK, map[string]any{
		"description": "An example response of GET /v1/check, computed on the loaded sanctions data (offline: no domain lookup).",
		"request":     "GET " + s.absURL("/v1/check") + "?name=Acme%20Widgets%20LLC&address=" + sampleQuery.Address,
		"response":    result,
		"data_as_of":  asOf,
	})
}

func (s *Server) handleRules(w http.ResponseWriter, r *http.Request) {
	s.writeJSON(w, http.StatusOK, map[string]any{
		"rules":      s.opt.Rules,
		"note":       "Rules a preflight request may override field by field (snake_case over HTTP and MCP).",
		"data_as_of": s.dataAsOf(),
	})
}

func (s *Server) handleHealth(w http.ResponseWriter, r *http.Request) {
	now := s.now()
	sanctions := map[string]any{"ready": s.opt.Sanctions.Ready()}
	status, code := "ok", http.StatusOK
	if s.opt.Sanctions.Ready() {
		asOf := s.opt.Sanctions.DataAsOf()
		age := now.Sub(asOf)
		sanctions["data_as_of"] = asOf.UTC().Format(time.RFC3339)
		sanctions["age_seconds"] = int64(age / time.Second)
		sanctions["stale"] = age > staleAfter
		if age > staleAfter {
			status = "degraded"
		}
	} else {
		status, code = "unavailable", http.StatusServiceUnavailable
	}
	if r := s.RefreshHealth(); r != nil {
		sanctions["refresh"] = r
	}
	index := map[string]any{"fresh": false}
	if at, err := s.opt.Endpoints.IndexUpdatedAt(r.Context()); err != nil {
		index["error"] = "index unreadable"
	} else if !at.IsZero() {
		index["updated_at"] = at.UTC().Format(time.RFC3339)
		index["fresh"] = now.Sub(at) <= time.Duration(s.opt.Config.IndexFreshness)
	}
	storeHealth := map[string]any{"ready": true}
	if s.opt.StoreHealth != nil {
		if err := s.opt.StoreHealth(r.Context()); err != nil {
			storeHealth = map[string]any{"ready": false, "error": err.Error()}
			status, code = "unavailable", http.StatusServiceUnavailable
		}
	}
	body := map[string]any{
		"store":      storeHealth,
		"status":     status,
		"version":    ServiceVersion,
		"sanctions":  sanctions,
		"index":      index,
		"data_as_of": s.dataAsOf(),
	}
	if h := s.facHealth.Load(); h != nil {
		body["facilitator"] = h
	}
	// Paid calls fail while the facilitator is down: not "ok", though the free routes still work.
	body["paid_calls"] = s.paidCallsField(r.Context())
	if status == "ok" && s.facilitatorDown() {
		body["status"] = "degraded"
	}
	s.writeJSON(w, code, body)
}

func (s *Server) handleStatus(w http.ResponseWriter, r *http.Request) {
	now := s.now()
	body := map[string]any{
		"service":         "payguard",
		"time":            now.UTC().Format(time.RFC3339),
		"started_at":      s.started.UTC().Format(time.RFC3339),
		"uptime_seconds":  int64(now.Sub(s.started) / time.Second),
		"requests_served": s.requests.Load(),
		"sanctions_ready": s.opt.Sanctions.Ready(),
		"trial_limit":     s.opt.Trial.Limit(),
		"data_as_of":      s.dataAsOf(),
	}
	if h := s.facHealth.Load(); h != nil {
		body["facilitator"] = h
	}
	for k, v := range versions() { // api_version and build: the API's contract and this binary, apart
		body[k] = v
	}
	body["paid_calls"] = s.paidCallsField(r.Context())
	s.writeJSON(w, http.StatusOK, body)
}
