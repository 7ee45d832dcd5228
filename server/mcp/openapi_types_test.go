package mcp

import (
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/payguard/payguard/policy"
	"github.com/payguard/payguard/preflight"
	"github.com/payguard/payguard/screening"
	"github.com/payguard/payguard/server/core"
	"github.com/payguard/payguard/server/docs"
)

// servedOpenAPI is /openapi.json as served, loaded and validated with kin-openapi.
func servedOpenAPI(t *testing.T) *openapi3.T {
	t.Helper()
	raw, err := docs.OpenAPI(docs.Info{BaseURL: "https://api.example", Version: "1.0.0"})
	if err != nil {
		t.Fatal(err)
	}
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(raw)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	if err := doc.Validate(loader.Context); err != nil {
		t.Fatalf("the served OpenAPI document is invalid: %v", err)
	}
	return doc
}

// jsonFields are the JSON member names of struct type t as encoding/json writes and reads them.
func jsonFields(t reflect.Type) []string {
	var out []string
	for f := range t.Fields() {
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
			out = append(out, jsonFields(f.Type)...)
			continue
		}
		if name == "" {
			name = f.Name
		}
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

func schemaKeys(s *openapi3.SchemaRef) []string {
	var out []string
	if s != nil && s.Value != nil {
		for k := range s.Value.Properties {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// prop is the schema of a member, following an array to its items.
func prop(s *openapi3.SchemaRef, name string) *openapi3.SchemaRef {
	p := s.Value.Properties[name]
	if p != nil && p.Value != nil && p.Value.Items != nil {
		return p.Value.Items
	}
	return p
}

// notFromCallers are the members of the engine's input types that a caller may not send (the parser refuses
// them, checked below), so /openapi.json leaves them out.
var notFromCallers = map[string]bool{
	"PreflightInput.context.config_sha256": true, // the proxy binds its rule set's hash in code
}

// Every object /openapi.json describes is the Go type that reads or writes it, member for member: a field
// added to the type but not to the served schema fails here (issue 33 item 6), unless it is listed in
// notFromCallers and the parser refuses it; an answer's schema lists exactly what the type writes.
func TestOpenAPIMatchesGoTypes(t *testing.T) {
	c := servedOpenAPI(t).Components.Schemas
	input := c["PreflightInput"]
	requests := []struct {
		what   string
		schema *openapi3.SchemaRef
		typ    reflect.Type
		wrap   func(member string) string // a body with the member set, to show the parser refuses it
	}{
		{"PreflightInput", input, reflect.TypeFor[preflight.Input](), func(m string) string { return `{"` + m + `":1}` }},
		{"PreflightInput.cart", prop(input, "cart"), reflect.TypeFor[preflight.Cart](), func(m string) string { return `{"cart":{"` + m + `":"x"}}` }},
		{"PreflightInput.context", prop(input, "context"), reflect.TypeFor[preflight.Context](), func(m string) string { return `{"context":{"` + m + `":"x"}}` }},
		{"Rules", c["Rules"], reflect.TypeFor[policy.Rules](), func(m string) string { return `{"rules":{"` + m + `":true}}` }},
	}
	for _, r := range requests {
		served, fields := schemaKeys(r.schema), jsonFields(r.typ)
		for _, f := range fields {
			if slices.Contains(served, f) {
				continue
			}
			if !notFromCallers[r.what+"."+f] {
				t.Errorf("%s: %s has member %q, missing from /openapi.json (add it to server/schema's type)", r.what, r.typ, f)
				continue
			}
			_, err := preflight.ParseInput([]byte(r.wrap(f)))
			if ie := (*preflight.InputError)(nil); !errors.As(err, &ie) || (ie.Code != "unknown_field" && ie.Code != "unknown_rule") {
				t.Errorf("%s: member %q is left out of /openapi.json as set in code only, but the parser accepts it (%v)", r.what, f, err)
			}
		}
		for _, s := range served {
			if !slices.Contains(fields, s) {
				t.Errorf("%s: /openapi.json describes %q, which %s does not have", r.what, s, r.typ)
			}
		}
	}

	pre, ep := c["PreflightResult"], c["EndpointResult"]
	answers := []struct {
		what   string
		schema *openapi3.SchemaRef
		typ    reflect.Type
	}{
		{"CheckResult", c["CheckResult"], reflect.TypeFor[screening.CheckResult]()},
		{"PreflightResult", pre, reflect.TypeFor[preflight.Result]()},
		{"PreflightResult.receipt", prop(pre, "receipt"), reflect.TypeFor[preflight.Receipt]()},
		{"EndpointResult", ep, reflect.TypeFor[core.EndpointResult]()},
		{"EndpointResult.observations", prop(ep, "observations"), reflect.TypeFor[core.EndpointObservation]()},
	}
	for _, a := range answers {
		if served, fields := schemaKeys(a.schema), jsonFields(a.typ); !slices.Equal(served, fields) {
			t.Errorf("%s drifted from %s:\n  /openapi.json: %v\n  Go type:       %v", a.what, a.typ, served, fields)
		}
	}
}

// The derived PreflightInput accepts every input the engine's decision vectors parse: deriving it from the
// types did not make it stricter than the parser.
func TestOpenAPIPreflightInputAcceptsVectors(t *testing.T) {
	schema := servedOpenAPI(t).Components.Schemas["PreflightInput"].Value
	raw, err := os.ReadFile("../../testdata/vectors/decisions.json")
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Vectors []struct {
			Name  string          `json:"name"`
			Input json.RawMessage `json:"input"`
		} `json:"vectors"`
	}
	if err := json.Unmarshal(raw, &file); err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, v := range file.Vectors {
		if _, err := preflight.ParseInput(v.Input); err != nil {
			continue
		}
		var body any
		if err := json.Unmarshal(v.Input, &body); err != nil {
			t.Fatal(err)
		}
		if err := schema.VisitJSON(body); err != nil {
			t.Errorf("%s: parsed by the engine, refused by /openapi.json's PreflightInput: %v", v.Name, err)
		}
		checked++
	}
	if checked < 100 {
		t.Fatalf("only %d vectors parsed", checked)
	}
}
