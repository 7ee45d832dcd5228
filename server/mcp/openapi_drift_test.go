package mcp

import (
	"encoding/json"
	"slices"
	"sort"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/payguard/payguard/policy"
	"github.com/payguard/payguard/server/docs"
	"github.com/payguard/payguard/server/schema"
)

// The preflight body has two descriptions: the MCP tool's and /openapi.json's. Both are derived from
// server/schema's PreflightArgs (issue 33 item 6); this test keeps them member for member the same (at the
// top, in cart, in context and in rules), should either stop being derived.
func TestOpenAPIPreflightInputMatchesMCPArgs(t *testing.T) {
	raw, err := docs.OpenAPI(docs.Info{BaseURL: "https://api.example"})
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Components struct {
			Schemas map[string]openAPISchema `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	input, rules := doc.Components.Schemas["PreflightInput"], doc.Components.Schemas["Rules"]
	defaults := policy.DefaultRules()
	tool, err := schema.Preflight(&defaults)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		what     string
		openAPI  []string
		fromArgs *jsonschema.Schema
	}{
		{"the preflight body", keys(input.Properties), tool},
		{"cart", keys(input.Properties["cart"].Properties), tool.Properties["cart"]},
		{"context", keys(input.Properties["context"].Properties), tool.Properties["context"]},
		{"rules", keys(rules.Properties), tool.Properties["rules"]},
	} {
		if c.fromArgs == nil {
			t.Errorf("%s: the MCP schema has no such object", c.what)
			continue
		}
		var mcp []string
		for k := range c.fromArgs.Properties {
			mcp = append(mcp, k)
		}
		sort.Strings(mcp)
		if !slices.Equal(c.openAPI, mcp) {
			t.Errorf("%s drifted:\n  openapi.json: %v\n  MCP:          %v", c.what, c.openAPI, mcp)
		}
	}
}

type openAPISchema struct {
	Properties map[string]openAPISchema `json:"properties"`
}

func keys(m map[string]openAPISchema) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
