package server

import (
	"net/http"
)

// Probes shared with `payguard proxy`: /healthz answers 200 while the process serves (liveness); /readyz
// answers 200 once a sanctions list is loaded and while the store can record a paid call, so paid calls can
// be answered, and 503 otherwise (readiness). /health stays: the documented, richer document (freshness,
// index, facilitator).

func (s *Server) handleHealthz(w http.ResponseWriter, r *http.Request) {
	s.writeJSON(w, http.StatusOK, map[string]any{"status": "ok", "data_as_of": s.dataAsOf()})
}

func (s *Server) handleReadyz(w http.ResponseWriter, r *http.Request) {
	body := map[string]any{"status": "ready", "data_as_of": s.dataAsOf()}
	if st := s.RefreshHealth(); st != nil {
		body["sanctions"] = st
	}
	code := http.StatusOK
	if !s.opt.Sanctions.Ready() {
		body["status"], body["error"] = "not ready", "no sanctions list loaded: paid calls answer 503 sanctions_data_unavailable"
		code = http.StatusServiceUnavailable
	} else if s.opt.StoreHealth != nil {
		// The store's own health, as /health reports it and the proxy's /readyz asks it: a bolt journal that
		// cannot be written (a full disk) or a stopped ledger, or a Redis whose ledger epoch is gone (every
		// nonce claim and trial counter refused), is not ready while it lasts.
		if err := s.opt.StoreHealth(r.Context()); err != nil {
			body["status"], body["error"] = "not ready", "store: "+err.Error()
			code = http.StatusServiceUnavailable
		}
	}
	// Readiness stays 200 while only the facilitator is down (the free routes and trials still answer, and
	// every replica shares the facilitator), but it says so: paid calls answer 503 facilitator_unavailable.
	body["paid_calls"] = s.paidCallsField(r.Context())
	if code == http.StatusOK && s.facilitatorDown() {
		body["status"] = "degraded"
	}
	s.writeJSON(w, code, body)
}
