package core

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/payguard/payguard/index"
	"github.com/payguard/payguard/store"
)

// maxURLLen bounds the endpoint operation's url (SPEC §10: text fields are bounded).
const maxURLLen = 2048

// knownMethods are the HTTP methods the endpoint index records.
var knownMethods = map[string]bool{"GET": true, "POST": true, "PUT": true, "PATCH": true, "DELETE": true, "HEAD": true, "OPTIONS": true}

// EndpointResult is the 200 body of GET /v1/endpoint.
type EndpointResult struct {
	URL          string                `json:"url"`
	Method       string                `json:"method"`
	Observations []EndpointObservation `json:"observations"`
	// Facts are derived from the observations (index.Derive): live, price history, payTo history.
	Facts          index.Summary `json:"facts"`
	IndexUpdatedAt string        `json:"index_updated_at"`
	DataAsOf       string        `json:"data_as_of"`
}

// EndpointObservation is one observation: a 402 or paid response seen by a payguard proxy, or an unpaid
// probe.
type EndpointObservation struct {
	ObservedAt string          `json:"observed_at"`
	Status     int             `json:"status"`
	Usable     bool            `json:"usable"`
	Source     string          `json:"source,omitempty"`
	Offers     []store.Offer   `json:"offers,omitempty"`
	Paid       *store.Offer    `json:"paid,omitempty"`
	Category   string          `json:"category,omitempty"`
	Metadata   json.RawMessage `json:"metadata,omitempty"`
	Challenge  json.RawMessage `json:"challenge,omitempty"`
	Error      string          `json:"error,omitempty"`
}

// lookupEndpoint is the endpoint-index lookup of the endpoint operation: the index
// fresh (else index_unavailable), the URL listed (else endpoint_not_listed) and, when the URL was observed
// with several methods, a method given (else method_required). target and method ("" when not given) must
// already be checked. Everything here runs before payment.
func (s *Service) lookupEndpoint(ctx context.Context, target, method string) (EndpointResult, *Error) {
	fail := func(status int, code, msg string) (EndpointResult, *Error) {
		return EndpointResult{}, Errorf(status, code, msg)
	}
	if s.o.Endpoints == nil {
		return fail(http.StatusServiceUnavailable, CodeIndexUnavailable, "the endpoint index is not available here; nothing was charged")
	}
	updated, err := s.o.Endpoints.IndexUpdatedAt(ctx)
	fresh := s.o.IndexFreshness
	if err != nil || updated.IsZero() || s.o.Now().Sub(updated) > fresh {
		if err != nil {
			s.o.Logger.Error("endpoint index unavailable", "err", err)
		}
		return fail(http.StatusServiceUnavailable, CodeIndexUnavailable, fmt.Sprintf("the endpoint index has no data newer than %s; nothing was charged", fresh))
	}
	obs, err := s.o.Endpoints.Observations(ctx, target)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		s.o.Logger.Error("endpoint index read failed", "err", err)
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
	result := EndpointResult{URL: target, Method: method, IndexUpdatedAt: updated.UTC().Format(time.RFC3339), Observations: []EndpointObservation{},
		Facts: index.Derive(target, selected, method, s.o.Now(), 0)}
	for _, o := range selected {
		eo := EndpointObservation{ObservedAt: o.ObservedAt.UTC().Format(time.RFC3339), Status: o.Status, Usable: o.Usable, Error: o.Error,
			Source: o.Source, Offers: o.Offers, Paid: o.Paid, Category: o.Category}
		if len(o.Challenge) > 0 && json.Valid(o.Challenge) {
			eo.Challenge = json.RawMessage(o.Challenge)
		}
		if len(o.Metadata) > 0 && json.Valid(o.Metadata) {
			eo.Metadata = json.RawMessage(o.Metadata)
		}
		result.Observations = append(result.Observations, eo)
	}
	return result, nil
}

// EndpointURL checks the url parameter: an absolute http(s) URL with a host, bounded, no fragment or
// credentials; and returns it as the Index keys it (index.NormalizeURL: the proxy and the prober write
// observations under that key).
func EndpointURL(raw string) (string, *Error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return "", Errorf(http.StatusBadRequest, CodeInvalidURL, "url is required")
	}
	if len(raw) > maxURLLen {
		return "", Errorf(http.StatusBadRequest, CodeInvalidURL, fmt.Sprintf("url is longer than %d bytes", maxURLLen))
	}
	if !utf8.ValidString(raw) {
		return "", Errorf(http.StatusBadRequest, CodeInvalidURL, "url is not valid UTF-8")
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" || u.User != nil || u.Fragment != "" {
		return "", Errorf(http.StatusBadRequest, CodeInvalidURL, "url must be an absolute http or https URL without credentials or fragment")
	}
	key, err := index.NormalizeURL(raw)
	if err != nil {
		return "", Errorf(http.StatusBadRequest, CodeInvalidURL, "url must be an absolute http or https URL without credentials or fragment")
	}
	return key, nil
}
