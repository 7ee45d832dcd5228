package server

import (
	"net/http"
)

// Probes shared with `payguard proxy`: /healthz answers 200 while the process serves (liveness); /readyz
// answers 200 once a sanctions list is loaded, so paid calls can be answered, and 503 before (readiness).
// /health stays: the documented, richer document (freshness, index, facilitator).

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
	}
	s.writeJSON(w, code, body)
}
