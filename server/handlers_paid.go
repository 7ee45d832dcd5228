package server

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/payguard/payguard/screening"
	"github.com/payguard/payguard/server/core"
)

// Bounds of query inputs (SPEC §10: text fields are bounded and valid UTF-8): the screening's own, which the
// OpenAPI document states too.
const (
	maxNameLen    = screening.MaxNameLen
	maxAddressLen = screening.MaxAddressLen
	maxDomainLen  = screening.MaxDomainLen // a domain or a URL
	maxURLLen     = 2048
)

// query parses the raw query strictly: a malformed escape is 400, every value must be valid UTF-8, and a
// parameter may appear once.
func query(r *http.Request) (url.Values, *apiError) {
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return nil, errorf(http.StatusBadRequest, core.CodeInvalidParameter, "the query string is malformed: "+err.Error())
	}
	for k, vs := range q {
		if len(vs) > 1 {
			return nil, errorf(http.StatusBadRequest, core.CodeInvalidParameter, fmt.Sprintf("parameter %q is given more than once", k))
		}
		if !utf8.ValidString(k) || !utf8.ValidString(vs[0]) {
			return nil, errorf(http.StatusBadRequest, core.CodeInvalidParameter, "query parameters must be valid UTF-8")
		}
	}
	return q, nil
}

func (s *Server) handleCheck(w http.ResponseWriter, r *http.Request) {
	if !s.allowMethods(w, r, http.MethodGet) {
		return
	}
	q, e := query(r)
	if e != nil {
		s.writeError(w, e)
		return
	}
	// The fields as sent: the core validates them (UTF-8, bounds, the checker's rules) for every channel.
	op, e := s.core.Check(core.CheckQuery{Name: strings.TrimSpace(q.Get("name")),
		Address: strings.TrimSpace(q.Get("address")), Domain: strings.TrimSpace(q.Get("domain"))})
	if e != nil {
		s.writeError(w, e)
		return
	}
	trialAsked, e := trialParam(q, true)
	if e != nil {
		s.writeError(w, e)
		return
	}
	s.sell(w, r, op, trialAsked)
}

func (s *Server) handlePreflight(w http.ResponseWriter, r *http.Request) {
	if !s.allowMethods(w, r, http.MethodPost) {
		return
	}
	q, e := query(r)
	if e != nil {
		s.writeError(w, e)
		return
	}
	trialAsked, e := trialParam(q, true)
	if e != nil {
		s.writeError(w, e)
		return
	}
	body, e := core.ReadBody(w, r, core.MaxBodyBytes)
	if e != nil {
		s.writeError(w, e)
		return
	}
	if len(body) == 0 {
		s.writeError(w, errorf(http.StatusBadRequest, core.CodeMissingBody, "a JSON PreflightInput body is required"))
		return
	}
	op, e := s.core.Preflight(body)
	if e != nil {
		s.writeError(w, e)
		return
	}
	s.sell(w, r, op, trialAsked)
}

func (s *Server) handleEndpoint(w http.ResponseWriter, r *http.Request) {
	if !s.allowMethods(w, r, http.MethodGet) {
		return
	}
	q, e := query(r)
	if e != nil {
		s.writeError(w, e)
		return
	}
	if _, e := trialParam(q, false); e != nil {
		s.writeError(w, e)
		return
	}
	op, e := s.core.Endpoint(r.Context(), q.Get("url"), q.Get("method"), q.Has("method"))
	if e != nil {
		s.writeError(w, e)
		return
	}
	s.sell(w, r, op, false)
}
