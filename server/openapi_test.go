package server

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"
	"github.com/payguard/payguard/server/core"
)

var openapiCache sync.Map // *env -> *openapiDoc

type openapiDoc struct {
	doc    *openapi3.T
	router routers.Router
}

// loadOpenAPI fetches /openapi.json from the handler (not through do, which validates) and loads it.
func loadOpenAPI(t *testing.T, e *env) *openapiDoc {
	t.Helper()
	if d, ok := openapiCache.Load(e); ok {
		return d.(*openapiDoc)
	}
	rec := httptest.NewRecorder()
	e.srv.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/openapi.json", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("/openapi.json: %d", rec.Code)
	}
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(rec.Body.Bytes())
	if err != nil {
		t.Fatalf("load OpenAPI: %v", err)
	}
	if err := doc.Validate(loader.Context); err != nil {
		t.Fatalf("OpenAPI document is invalid: %v", err)
	}
	router, err := legacy.NewRouter(doc)
	if err != nil {
		t.Fatalf("router: %v", err)
	}
	d := &openapiDoc{doc: doc, router: router}
	openapiCache.Store(e, d)
	t.Cleanup(func() { openapiCache.Delete(e) })
	return d
}

// validateResponse checks one answer against the OpenAPI document: status documented for the operation,
// headers and body matching. A wrong-method answer has no operation; its body is checked against ErrorBody.
func validateResponse(t *testing.T, e *env, req *http.Request, reqBody []byte, r result) {
	t.Helper()
	d := loadOpenAPI(t, e)
	vreq := req.Clone(context.Background())
	vreq.Body = io.NopCloser(bytes.NewReader(reqBody))
	route, params, err := d.router.FindRoute(vreq)
	if err != nil {
		if r.StatusCode != http.StatusMethodNotAllowed && r.StatusCode != http.StatusNotFound {
			t.Fatalf("find route %s %s: %v", req.Method, req.URL.Path, err)
		}
		var body any
		if err := json.Unmarshal(r.body, &body); err != nil {
			t.Fatalf("%s %s: %d with a non-JSON body", req.Method, req.URL.Path, r.StatusCode)
		}
		if err := d.doc.Components.Schemas["ErrorBody"].Value.VisitJSON(body); err != nil {
			t.Fatalf("%s %s: %d body does not match ErrorBody: %v", req.Method, req.URL.Path, r.StatusCode, err)
		}
		return
	}
	opts := &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: vreq, PathParams: params, Route: route, Options: opts},
		Status:                 r.StatusCode,
		Header:                 r.Header,
		Body:                   io.NopCloser(bytes.NewReader(r.body)),
		Options:                opts,
	}
	if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
		t.Fatalf("%s %s: response %d does not match the OpenAPI document: %v\nbody: %.400s", req.Method, req.URL.Path, r.StatusCode, err, r.body)
	}
}

func TestOpenAPIDocument(t *testing.T) {
	e := newEnv(t)
	d := loadOpenAPI(t, e)
	if d.doc.OpenAPI != "3.1.0" || d.doc.Info.Version != ServiceVersion {
		t.Fatalf("openapi %q version %q", d.doc.OpenAPI, d.doc.Info.Version)
	}
	x, ok := d.doc.Components.SecuritySchemes["x402"]
	if !ok || x.Value.Description == "" {
		t.Fatal("no x402 security scheme")
	}
	for _, p := range []string{"/v1/check", "/v1/preflight", "/v1/endpoint", "/v1/sample", "/v1/rules/default", "/health",
		"/status", "/openapi.json", "/llms.txt", "/.well-known/x402", "/.well-known/agent-card.json", "/.well-known/mcp.json",
		"/.well-known/payguard-keys.json", "/terms", "/privacy", "/.well-known/security.txt"} {
		if d.doc.Paths.Find(p) == nil {
			t.Errorf("path %s is not described", p)
		}
	}
	if _, ok := d.doc.Components.Schemas["ErrorBody"]; !ok {
		t.Error("no ErrorBody component")
	}
	pre := d.doc.Paths.Find("/v1/preflight").Post
	for _, code := range []int{200, 400, 402, 405, 408, 413, 500, core.StatusSettlementOutcomeUnknown, 503} {
		if pre.Responses.Status(code) == nil {
			t.Errorf("preflight: status %d undocumented", code)
		}
	}
	ep := d.doc.Paths.Find("/v1/endpoint").Get
	for _, code := range []int{404, 409} {
		if ep.Responses.Status(code) == nil {
			t.Errorf("endpoint: status %d undocumented", code)
		}
	}
	// The validator must reject what the document forbids, or every response check above proves nothing.
	bad := d.doc.Components.Schemas["CheckResult"].Value.VisitJSON(map[string]any{"risk": "fine", "flags": []any{}, "data_as_of": "x"})
	if bad == nil {
		t.Fatal("CheckResult schema accepted risk \"fine\"")
	}
}

// The query bounds the OpenAPI document states are the ones the server enforces: an address at the stated
// maximum reaches the challenge, one byte more is refused before payment.
func TestOpenAPIQueryBoundsAreTheServers(t *testing.T) {
	e := newEnv(t)
	for _, p := range []struct {
		name string
		max  int
	}{{"name", maxNameLen}, {"address", maxAddressLen}, {"domain", maxDomainLen}} {
		stated := e.openAPIMaxLength(t, "/v1/check", p.name)
		if stated != p.max {
			t.Errorf("OpenAPI states %s maxLength %d, the server enforces %d", p.name, stated, p.max)
		}
	}
	if r := e.do("GET", "/v1/check?address="+strings.Repeat("a", maxAddressLen+1), nil, nil); r.StatusCode != http.StatusBadRequest {
		t.Errorf("an address over the bound: %d, want 400 before payment", r.StatusCode)
	}
}

// openAPIMaxLength reads a query parameter's maxLength from the served OpenAPI document.
func (e *env) openAPIMaxLength(t *testing.T, path, param string) int {
	t.Helper()
	r := e.do("GET", "/openapi.json", nil, nil)
	var doc struct {
		Paths map[string]map[string]struct {
			Parameters []struct {
				Name   string `json:"name"`
				Schema struct {
					MaxLength int `json:"maxLength"`
				} `json:"schema"`
			} `json:"parameters"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(r.body, &doc); err != nil {
		t.Fatalf("openapi.json: %v", err)
	}
	for _, op := range doc.Paths[path] {
		for _, p := range op.Parameters {
			if p.Name == param {
				return p.Schema.MaxLength
			}
		}
	}
	t.Fatalf("no %s parameter on %s in openapi.json", param, path)
	return 0
}
