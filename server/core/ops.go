package core

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/payguard/payguard/preflight"
	"github.com/payguard/payguard/receipts"
	"github.com/payguard/payguard/screening"
)

// SanctionsGate is 503 before payment when no sanctions list is loaded: screening without it would sell an
// "unknown" that the caller paid for.
func (s *Service) SanctionsGate() *Error {
	if s.o.Sanctions.Ready() {
		return nil
	}
	return Errorf(http.StatusServiceUnavailable, CodeSanctionsUnavailable, "sanctions data is not loaded yet; nothing was charged")
}

// Check prepares the check operation: at least one input, each valid UTF-8 and bounded (SPEC §10), then
// the checker's own validation, and a sanctions list loaded. The channels hand over the fields as sent
// (trimmed of surrounding white space); this is the one place they are judged, for HTTP and MCP alike.
func (s *Service) Check(q CheckQuery) (*Op, *Error) {
	for _, f := range []struct {
		name, value string
		max         int
	}{{"name", q.Name, screening.MaxNameLen}, {"address", q.Address, screening.MaxAddressLen}, {"domain", q.Domain, screening.MaxDomainLen}} {
		if !utf8.ValidString(f.value) {
			return nil, Errorf(http.StatusBadRequest, CodeInvalidParameter, f.name+" is not valid UTF-8")
		}
		if len(f.value) > f.max {
			return nil, Errorf(http.StatusBadRequest, CodeInvalidParameter, fmt.Sprintf("%s is longer than %d bytes", f.name, f.max))
		}
	}
	if q.Name == "" && q.Address == "" && q.Domain == "" {
		return nil, Errorf(http.StatusBadRequest, CodeMissingInput, "give at least one of name, address (wallet) or domain")
	}
	if err := s.o.Checker.Validate(q); err != nil {
		return nil, inputError(err, CodeInvalidParameter)
	}
	if e := s.SanctionsGate(); e != nil {
		return nil, e
	}
	return &Op{Route: RouteCheck, Input: func() string { return fingerprint(q.Name, q.Address, q.Domain) }, Work: func(ctx context.Context) (Done, *Error) {
		res, err := s.o.Checker.Check(ctx, q)
		if err != nil {
			s.o.Logger.Error("check failed", "err", err)
			return Done{}, Errorf(http.StatusServiceUnavailable, CodeSanctionsUnavailable, "screening could not be completed; nothing was charged")
		}
		return Done{Body: res}, nil
	}}, nil
}

// Preflight prepares the preflight operation from the PreflightInput as sent (the engine's parser enforces
// SPEC §10's limits; the receipt's input_sha256 hashes these bytes), and a sanctions list loaded. The
// operation keeps body (its parsed input aliases it): the caller never changes body afterwards.
func (s *Service) Preflight(body []byte) (*Op, *Error) {
	input, err := s.o.Preflight.Parse(body)
	if err != nil {
		return nil, inputError(err, CodeInvalidJSON)
	}
	if e := s.SanctionsGate(); e != nil {
		return nil, e
	}
	return &Op{Route: RoutePreflight, Input: func() string { return fingerprintBody(body) }, Work: func(ctx context.Context) (Done, *Error) {
		d, err := s.o.Preflight.Decide(ctx, input)
		if err != nil {
			if errors.Is(err, receipts.ErrSigningUnavailable) {
				s.o.Logger.Error("receipt signing unavailable", "err", err)
				return Done{}, Errorf(http.StatusServiceUnavailable, CodeReceiptSigning, "the decision could not be signed; nothing was charged")
			}
			s.o.Logger.Error("preflight failed", "err", err)
			return Done{}, Errorf(http.StatusInternalServerError, CodeInternal, "the decision could not be made; nothing was charged")
		}
		return Done{Body: d.Body, Decision: d.Decision, ReceiptID: d.ReceiptID}, nil
	}}, nil
}

// Endpoint prepares the endpoint-index lookup: the URL and method checked, the index fresh, the URL listed
// and, when it was observed with several methods, a method given; all before payment. methodGiven says the
// caller gave a method (an empty one given is invalid).
func (s *Service) Endpoint(ctx context.Context, rawURL, method string, methodGiven bool) (*Op, *Error) {
	target, e := EndpointURL(rawURL)
	if e != nil {
		return nil, e
	}
	if !utf8.ValidString(method) {
		return nil, Errorf(http.StatusBadRequest, CodeInvalidMethod, "method must be one of GET, POST, PUT, PATCH, DELETE, HEAD, OPTIONS")
	}
	method = strings.ToUpper(strings.TrimSpace(method))
	if (methodGiven || method != "") && !knownMethods[method] {
		return nil, Errorf(http.StatusBadRequest, CodeInvalidMethod, "method must be one of GET, POST, PUT, PATCH, DELETE, HEAD, OPTIONS")
	}
	result, e := s.lookupEndpoint(ctx, target, method)
	if e != nil {
		return nil, e
	}
	return &Op{Route: RouteEndpoint, Input: func() string { return fingerprint(target, method) }, Work: func(context.Context) (Done, *Error) {
		result.DataAsOf = s.DataAsOf()
		return Done{Body: result}, nil
	}}, nil
}

// inputError is an engine's input error as an Error: its own code and status, else fallback.
func inputError(err error, fallback string) *Error {
	var ie *preflight.InputError
	if errors.As(err, &ie) {
		return Errorf(ie.HTTPStatus(), ie.Code, ie.Detail())
	}
	return Errorf(http.StatusBadRequest, fallback, err.Error())
}
