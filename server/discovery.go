package server

import (
	"encoding/json"
	"net/http"

	"github.com/payguard/payguard/server/core"
)

// bazaarInput is the x402 bazaar (discovery) extension's description of how to call a paid route, with a
// working example; facilitators catalogue it, and v1 clients read the same facts from outputSchema.
type bazaarInput struct {
	Type        string         `json:"type"`
	Method      string         `json:"method"`
	QueryParams map[string]any `json:"queryParams,omitempty"`
	BodyType    string         `json:"bodyType,omitempty"`
	Body        any            `json:"body,omitempty"`
}

// bazaarExamples are the routes' example inputs and outputs.
var bazaarExamples = map[string]struct {
	input  bazaarInput
	output any
}{
	core.RouteCheck.Path: {
		input: bazaarInput{Type: "http", Method: http.MethodGet,
			QueryParams: map[string]any{"name": "Acme Widgets LLC", "address": "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC", "domain": "example.com"}},
		output: map[string]any{"risk": "low", "flags": []string{}, "data_as_of": "2026-11-21T00:00:00Z"},
	},
	core.RoutePreflight.Path: {
		input: bazaarInput{Type: "http", Method: http.MethodPost, BodyType: "json", Body: map[string]any{
			"challenge": map[string]any{"x402Version": 2, "resource": map[string]any{"url": "https://api.example.com/data"},
				"accepts": []any{map[string]any{"scheme": "exact", "network": "eip155:8453", "amount": "10000",
					"asset": "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913", "payTo": "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC",
					"maxTimeoutSeconds": 60, "extra": map[string]any{"name": "USD Coin", "version": "2"}}}},
			"rules": map[string]any{"max_per_payment_usd": 1}}},
		output: map[string]any{"decision": "allow", "reasons": []string{"allow: all rules passed"}},
	},
	core.RouteEndpoint.Path: {
		input:  bazaarInput{Type: "http", Method: http.MethodGet, QueryParams: map[string]any{"url": "https://api.example.com/data", "method": "GET"}},
		output: map[string]any{"url": "https://api.example.com/data", "method": "GET", "observations": []any{}},
	},
}

// bazaarSchema is the JSON Schema of the bazaar info object, as the SDK sellers publish it.
var bazaarSchema = json.RawMessage(`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",` +
	`"properties":{"input":{"type":"object","properties":{"type":{"type":"string","const":"http"},` +
	`"method":{"type":"string","enum":["GET","POST"]},"queryParams":{"type":"object"},"bodyType":{"type":"string"},` +
	`"body":{"type":"object"}},"required":["type","method"]},"output":{"type":"object","properties":{` +
	`"type":{"type":"string"},"example":{"type":"object"}},"required":["type"]}},"required":["input"]}`)

// discovery returns the bazaar extension (v2) and the outputSchema (v1) of a paid route.
func discovery(path string) (bazaar, outputSchema json.RawMessage) {
	ex, ok := bazaarExamples[path]
	if !ok {
		return nil, nil
	}
	output := map[string]any{"type": "json", "example": ex.output}
	bazaar, _ = json.Marshal(map[string]any{"info": map[string]any{"input": ex.input, "output": output}, "schema": bazaarSchema})
	v1Input := map[string]any{"type": ex.input.Type, "method": ex.input.Method, "discoverable": true}
	if ex.input.QueryParams != nil {
		v1Input["queryParams"] = ex.input.QueryParams
	}
	if ex.input.Body != nil {
		v1Input["bodyType"], v1Input["body"] = ex.input.BodyType, ex.input.Body
	}
	outputSchema, _ = json.Marshal(map[string]any{"input": v1Input, "output": output})
	return bazaar, outputSchema
}
