package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/payguard/payguard/screening"
	"github.com/payguard/payguard/store"
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
		return nil, errorf(http.StatusBadRequest, CodeInvalidParameter, "the query string is malformed: "+err.Error())
	}
	for k, vs := range q {
		if len(vs) > 1 {
			return nil, errorf(http.StatusBadRequest, CodeInvalidParameter, fmt.Sprintf("parameter %q is given more than once", k))
		}
		if !utf8.ValidString(k) || !utf8.ValidString(vs[0]) {
			return nil, errorf(http.StatusBadRequest, CodeInvalidParameter, "query parameters must be valid UTF-8")
		}
	}
	return q, nil
}

func bounded(q url.Values, name string, max int) (string, *apiError) {
	v := strings.TrimSpace(q.Get(name))
	if len(v) > max {
		return "", errorf(http.StatusBadRequest, CodeInvalidParameter, fmt.Sprintf("%s is longer than %d bytes", name, max))
	}
	return v, nil
}

// sanctionsGate answers 503 before payment when no sanctions list is loaded: screening without it would
// sell an "unknown" that the caller paid for.
func (s *Server) sanctionsGate() *apiError {
	if s.opt.Sanctions.Ready() {
		return nil
	}
	return errorf(http.StatusServiceUnavailable, CodeSanctionsUnavailable, "sanctions data is not loaded yet; nothing was charged")
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
	var in CheckQuery
	for _, f := range []struct {
		dst  *string
		name string
		max  int
	}{{&in.Name, "name", maxNameLen}, {&in.Address, "address", maxAddressLen}, {&in.Domain, "domain", maxDomainLen}} {
		if *f.dst, e = bounded(q, f.name, f.max); e != nil {
			s.writeError(w, e)
			return
		}
	}
	if in.Name == "" && in.Address == "" && in.Domain == "" {
		s.writeError(w, errorf(http.StatusBadRequest, CodeMissingInput, "give at least one of name, address or domain"))
		return
	}
	if err := s.opt.Checker.Validate(in); err != nil {
		var ie *InputError
		if errors.As(err, &ie) {
			s.writeError(w, errorf(http.StatusBadRequest, ie.Code, ie.Message))
		} else {
			s.writeError(w, errorf(http.StatusBadRequest, CodeInvalidParameter, err.Error()))
		}
		return
	}
	trialAsked, e := trialParam(q, true)
	if e != nil {
		s.writeError(w, e)
		return
	}
	if e := s.sanctionsGate(); e != nil {
		s.writeError(w, e)
		return
	}
	s.servePaid(w, r, routeCheck, trialAsked, func(ctx context.Context) (any, *apiError) {
		res, err := s.opt.Checker.Check(ctx, in)
		if err != nil {
			s.log.Error("check failed", "err", err)
			return nil, errorf(http.StatusServiceUnavailable, CodeSanctionsUnavailable, "screening could not be completed; nothing was charged")
		}
		return res, nil
	})
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
	body, e := readBody(w, r)
	if e != nil {
		s.writeError(w, e)
		return
	}
	if len(body) == 0 {
		s.writeError(w, errorf(http.StatusBadRequest, CodeMissingBody, "a JSON PreflightInput body is required"))
		return
	}
	input, err := s.opt.Preflight.Parse(body)
	if err != nil {
		var ie *InputError
		if errors.As(err, &ie) {
			status := http.StatusBadRequest
			if ie.Status == http.StatusRequestEntityTooLarge {
				status = ie.Status
			}
			s.writeError(w, errorf(status, ie.Code, ie.Message))
		} else {
			s.writeError(w, errorf(http.StatusBadRequest, CodeInvalidJSON, err.Error()))
		}
		return
	}
	if e := s.sanctionsGate(); e != nil {
		s.writeError(w, e)
		return
	}
	s.servePaid(w, r, routePreflight, trialAsked, func(ctx context.Context) (any, *apiError) {
		d, err := s.opt.Preflight.Decide(ctx, input)
		if err != nil {
			if errors.Is(err, ErrSigningUnavailable) {
				s.log.Error("receipt signing unavailable", "err", err)
				return nil, errorf(http.StatusServiceUnavailable, CodeReceiptSigning, "the decision could not be signed; nothing was charged")
			}
			s.log.Error("preflight failed", "err", err)
			return nil, errorf(http.StatusInternalServerError, CodeInternal, "the decision could not be made; nothing was charged")
		}
		note(w, func(rec *recorder) { rec.decision, rec.receipt = d.Decision, d.ReceiptID })
		return d.Body, nil
	})
}

// knownMethods are the HTTP methods the endpoint index records.
var knownMethods = map[string]bool{"GET": true, "POST": true, "PUT": true, "PATCH": true, "DELETE": true, "HEAD": true, "OPTIONS": true}

// EndpointResult is the 200 body of GET /v1/endpoint.
type EndpointResult struct {
	URL            string                `json:"url"`
	Method         string                `json:"method"`
	Observations   []EndpointObservation `json:"observations"`
	IndexUpdatedAt string                `json:"index_updated_at"`
	DataAsOf       string                `json:"data_as_of"`
}

// EndpointObservation is one cached unpaid probe.
type EndpointObservation struct {
	ObservedAt string  `json:"observed_at"`
	Status     int     `json:"status"`
	Usable     bool    `json:"usable"`
	Challenge  rawJSON `json:"challenge,omitempty"`
	Error      string  `json:"error,omitempty"`
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
	target, e := endpointURL(q.Get("url"))
	if e != nil {
		s.writeError(w, e)
		return
	}
	method := strings.ToUpper(strings.TrimSpace(q.Get("method")))
	if q.Has("method") && !knownMethods[method] {
		s.writeError(w, errorf(http.StatusBadRequest, CodeInvalidMethod, "method must be one of GET, POST, PUT, PATCH, DELETE, HEAD, OPTIONS"))
		return
	}
	result, le := s.LookupEndpoint(r.Context(), target, method)
	if le != nil {
		s.writeError(w, errorf(le.Status, le.Code, le.Message))
		return
	}
	s.servePaid(w, r, routeEndpoint, false, func(context.Context) (any, *apiError) {
		result.DataAsOf = s.dataAsOf()
		return result, nil
	})
}

// LookupError is an endpoint lookup that cannot be answered; it is never charged. Code is SPEC §9.1's error code
// and Status its HTTP status.
type LookupError struct {
	Status        int
	Code, Message string
}

func (e *LookupError) Error() string { return e.Code + ": " + e.Message }

// LookupEndpoint is the endpoint-index lookup of /v1/endpoint, shared with MCP's check_endpoint: the index
// fresh (else index_unavailable), the URL listed (else endpoint_not_listed) and, when the URL was observed
// with several methods, a method given (else method_required). target and method ("" when not given) must
// already be checked (EndpointURL, KnownMethod). Everything here runs before payment.
func (s *Server) LookupEndpoint(ctx context.Context, target, method string) (EndpointResult, *LookupError) {
	fail := func(status int, code, msg string) (EndpointResult, *LookupError) {
		return EndpointResult{}, &LookupError{Status: status, Code: code, Message: msg}
	}
	if s.opt.Endpoints == nil {
		return fail(http.StatusServiceUnavailable, CodeIndexUnavailable, "the endpoint index is not available here; nothing was charged")
	}
	updated, err := s.opt.Endpoints.IndexUpdatedAt(ctx)
	fresh := time.Duration(s.opt.Config.IndexFreshness)
	if err != nil || updated.IsZero() || s.now().Sub(updated) > fresh {
		if err != nil {
			s.log.Error("endpoint index unavailable", "err", err)
		}
		return fail(http.StatusServiceUnavailable, CodeIndexUnavailable, fmt.Sprintf("the endpoint index has no data newer than %s; nothing was charged", fresh))
	}
	obs, err := s.opt.Endpoints.Observations(ctx, target)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		s.log.Error("endpoint index read failed", "err", err)
		return fail(http.StatusServiceUnavailable, CodeIndexUnavailable, "the endpoint index could not be read; nothing was charged")
	}
	byMethod := map[string][]store.Observation{}
	for _, o := range obs {
		byMethod[strings.ToUpper(o.Method)] = append(byMethod[strings.ToUpper(o.Method)], o)
	}
	if len(byMethod) == 0 {
		return fail(http.StatusNotFound, CodeEndpointNotListed, "the index has no observation of this URL")
	}
	if method == "" {
		if len(byMethod) > 1 {
			methods := make([]string, 0, len(byMethod))
			for m := range byMethod {
				methods = append(methods, m)
			}
			sort.Strings(methods)
			return fail(http.StatusConflict, CodeMethodRequired,
				"this URL was observed with several methods ("+strings.Join(methods, ", ")+"); give the method")
		}
		for m := range byMethod {
			method = m
		}
	}
	selected, ok := byMethod[method]
	if !ok {
		return fail(http.StatusNotFound, CodeEndpointNotListed, "the index has no observation of this URL with method "+method)
	}
	result := EndpointResult{URL: target, Method: method, IndexUpdatedAt: updated.UTC().Format(time.RFC3339), Observations: []EndpointObservation{}}
	for _, o := range selected {
		eo := EndpointObservation{ObservedAt: o.ObservedAt.UTC().Format(time.RFC3339), Status: o.Status, Usable: o.Usable, Error: o.Error}
		if len(o.Challenge) > 0 && jsonValid(o.Challenge) {
			eo.Challenge = rawJSON(o.Challenge)
		}
		result.Observations = append(result.Observations, eo)
	}
	return result, nil
}

// KnownMethod reports whether method (upper case) is one the endpoint index records.
func KnownMethod(method string) bool { return knownMethods[method] }

// EndpointURL checks an endpoint URL as /v1/endpoint's url parameter: see endpointURL.
func EndpointURL(raw string) (string, *LookupError) {
	u, e := endpointURL(raw)
	if e != nil {
		return "", &LookupError{Status: e.Status, Code: e.Code, Message: e.Message}
	}
	return u, nil
}

// endpointURL checks the url parameter: an absolute http(s) URL with a host, bounded, no fragment or
// credentials. The index is keyed by the URL as given.
func endpointURL(raw string) (string, *apiError) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return "", errorf(http.StatusBadRequest, CodeInvalidURL, "url is required")
	}
	if len(raw) > maxURLLen {
		return "", errorf(http.StatusBadRequest, CodeInvalidURL, fmt.Sprintf("url is longer than %d bytes", maxURLLen))
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" || u.User != nil || u.Fragment != "" {
		return "", errorf(http.StatusBadRequest, CodeInvalidURL, "url must be an absolute http or https URL without credentials or fragment")
	}
	return raw, nil
}
