package docs

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/payguard/payguard/screening"
)

type obj = map[string]any

func ref(name string) obj { return obj{"$ref": "#/components/schemas/" + name} }

func str(desc string) obj { return obj{"type": "string", "description": desc} }

func jsonBody(desc string, schema obj) obj {
	return obj{"description": desc, "headers": dataAsOfHeader(), "content": obj{"application/json": obj{"schema": schema}}}
}

func textBody(desc string) obj {
	return obj{"description": desc, "headers": dataAsOfHeader(),
		"content": obj{"text/plain": obj{"schema": obj{"type": "string"}}}}
}

func htmlBody(desc string) obj {
	return obj{"description": desc, "headers": dataAsOfHeader(),
		"content": obj{"text/html": obj{"schema": obj{"type": "string"}}}}
}

func dataAsOfHeader() obj {
	return obj{"X-Data-As-Of": obj{"description": "Time of the sanctions data (RFC 3339), or 1970-01-01T00:00:00Z while no list is loaded.",
		"schema": obj{"type": "string"}}}
}

func errResp(desc string) obj { return jsonBody(desc, ref("ErrorBody")) }

// commonErrors are answers every route can give.
func commonErrors(r obj) obj {
	r["405"] = errResp("Wrong method (method_not_allowed); the Allow header lists the methods. Not charged.")
	r["500"] = errResp("internal_error: an unexpected failure. Nothing was settled.")
	return r
}

func paidResponses(i Info, ok obj) obj {
	r := obj{
		"200": ok,
		"400": errResp("Bad input, rejected before payment and never charged: missing_input, invalid_parameter, invalid_trial, " +
			"missing_body, invalid_json and the preflight parser's codes (too_deep, invalid_utf8, field_too_long, too_many_options, " +
			"too_many_entries, unknown_rule), invalid_url, invalid_method."),
		"402": obj{
			"description": "Payment required, a payment that failed verification (error = the facilitator's invalidReason), a failed " +
				"settlement (error = errorReason, with PAYMENT-RESPONSE success:false), or an exhausted free trial (error trial_exhausted, " +
				"with the trial member). The v2 challenge is in the PAYMENT-REQUIRED header; the body is the v1 challenge.",
			"headers": obj{
				"PAYMENT-REQUIRED": obj{"description": "x402 v2 PaymentRequired, standard base64 of JSON.", "schema": obj{"type": "string"}},
				"PAYMENT-RESPONSE": obj{"description": "On a failed settlement of a v2 payment: SettleResponse with success:false.", "schema": obj{"type": "string"}},
				"X-Data-As-Of":     dataAsOfHeader()["X-Data-As-Of"],
			},
			"content": obj{"application/json": obj{"schema": ref("PaymentRequiredV1")}},
		},
		fmt.Sprint(i.SettlementUnknownStatus): errResp("settlement_outcome_unknown: the facilitator gave no usable answer to a settlement " +
			"request that was sent (timeout, reset, 5xx, unparseable). The transfer may have happened; error.nonce is the authorization " +
			"nonce to check on chain. Never retried by the service; do not pay again automatically. 502 because the failure is the " +
			"upstream facilitator's, and not 503, which always means nothing was settled."),
		"503": errResp("Data or a dependency is unavailable; nothing was settled or charged: sanctions_data_unavailable, index_unavailable, " +
			"receipt_signing_unavailable, facilitator_unavailable, trial_unavailable."),
	}
	return commonErrors(r)
}

func paidOK(desc, schema string) obj {
	r := jsonBody(desc, ref(schema))
	h := r["headers"].(obj)
	h["PAYMENT-RESPONSE"] = obj{"description": "x402 v2 settlement (SettleResponse, base64 JSON) when paid with PAYMENT-SIGNATURE. " +
		"On /v1/preflight its extensions carry the offer-receipt delivery receipt (JWS).", "schema": obj{"type": "string"}}
	h["X-PAYMENT-RESPONSE"] = obj{"description": "x402 v1 settlement when paid with X-PAYMENT.", "schema": obj{"type": "string"}}
	h["X-Trial-Remaining"] = obj{"description": "Free calls left today, on a trial call.", "schema": obj{"type": "string"}}
	return r
}

func trialParam() obj {
	return obj{"name": "trial", "in": "query", "required": false, "schema": obj{"type": "string", "enum": []string{"1"}},
		"description": "Use the free trial (only the value 1): calls per client IP per UTC day, shared with MCP. Exhausted: 402, never paid automatically."}
}

func queryParam(name, desc string, maxLen int) obj {
	return obj{"name": name, "in": "query", "required": false, "description": desc,
		"schema": obj{"type": "string", "maxLength": maxLen}}
}

func freeGet(summary, id string, ok obj, extra obj) obj {
	r := commonErrors(obj{"200": ok})
	for k, v := range extra {
		r[k] = v
	}
	return obj{"get": obj{"summary": summary, "operationId": id, "tags": []string{"free"}, "security": []obj{}, "responses": r}}
}

func paidSecurity() []obj { return []obj{{"x402": []string{}}, {}} }

// OpenAPI is /openapi.json: an OpenAPI 3.1.0 description of every route, parameter, body and error.
func OpenAPI(i Info) ([]byte, error) {
	components, err := schemas()
	if err != nil {
		return nil, err
	}
	check, pre, ep := i.paid("/v1/check"), i.paid("/v1/preflight"), i.paid("/v1/endpoint")
	paths := obj{
		"/v1/check": obj{"get": obj{
			"summary":     fmt.Sprintf("Payee check (%s, %d atomic units)", check.USD, check.Amount),
			"description": "Screens a wallet address and a name against the OFAC SDN list, and a merchant domain's registration age and DNS. At least one of name, address or domain is required (400 missing_input otherwise, not charged).",
			"operationId": "checkPayee", "tags": []string{"paid"}, "security": paidSecurity(),
			"parameters": []obj{
				queryParam("name", "Merchant or payee legal name.", screening.MaxNameLen),
				queryParam("address", "Payee wallet address. Confusable spellings are undone before the lookup (zero-width characters, fullwidth forms, white space, a missing 0x); any string is accepted and charged, and one that is no wallet address of a recognized format (EVM, Solana, bech32, CashAddr, Base58Check, XRP, Monero) is answered with the flag unrecognized_address and risk unknown.", screening.MaxAddressLen),
				queryParam("domain", "Merchant domain or URL.", screening.MaxDomainLen),
				trialParam(),
			},
			"responses": paidResponses(i, paidOK("The check result.", "CheckResult")),
		}},
		"/v1/preflight": obj{"post": obj{
			"summary":     fmt.Sprintf("Spend preflight (%s, %d atomic units)", pre.USD, pre.Amount),
			"description": "Decides allow, hold or block for an x402 PaymentRequired body (v1 or v2) or a cart, with a signed receipt. Limits, answered before payment: 64 KiB of body (413 body_too_large), body within 10 s (408 body_timeout), JSON depth 32, 32 payment options, 100 entries per rule list, bounded valid UTF-8 text (400). The paid route uses the x402 offer-receipt extension: signed offers in the 402 (extensions[\"offer-receipt\"].info.offers, JWS) and a signed delivery receipt in the settlement response.",
			"operationId": "preflightPayment", "tags": []string{"paid"}, "security": paidSecurity(),
			"parameters":  []obj{trialParam()},
			"requestBody": obj{"required": true, "content": obj{"application/json": obj{"schema": ref("PreflightInput")}}},
			"responses": func() obj {
				r := paidResponses(i, paidOK("The decision with its signed receipt. hold and block are delivered, charged results.", "PreflightResult"))
				r["408"] = errResp("body_timeout: the body did not arrive within 10 seconds. Not charged.")
				r["413"] = errResp("body_too_large: over 64 KiB of actual bytes. Not charged.")
				return r
			}(),
		}},
		"/v1/endpoint": obj{"get": obj{
			"summary":     fmt.Sprintf("Endpoint lookup (%s, %d atomic units)", ep.USD, ep.Amount),
			"description": fmt.Sprintf("Cached unpaid observations of a public x402 endpoint. Requires an index updated within %s (503 index_unavailable otherwise, before payment). Every error is answered before payment.", i.IndexFreshness),
			"operationId": "checkEndpoint", "tags": []string{"paid"}, "security": []obj{{"x402": []string{}}},
			"parameters": []obj{
				{"name": "url", "in": "query", "required": true, "description": "The endpoint's absolute http(s) URL.", "schema": obj{"type": "string", "maxLength": 2048}},
				{"name": "method", "in": "query", "required": false, "description": "Required when the URL was observed with several methods (409 method_required).",
					"schema": obj{"type": "string", "enum": []string{"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"}}},
			},
			"responses": func() obj {
				r := paidResponses(i, paidOK("The observations.", "EndpointResult"))
				r["404"] = errResp("endpoint_not_listed: no observation of this URL (and method). Not charged.")
				r["409"] = errResp("method_required: the URL was observed with several methods; add method. Not charged.")
				return r
			}(),
		}},
		"/v1/sample":        freeGet("Example check response", "getSample", jsonBody("An example /v1/check answer.", ref("Document")), nil),
		"/v1/rules/default": freeGet("Default rule set", "getDefaultRules", jsonBody("The rules a preflight overrides.", ref("RulesDocument")), nil),
		"/health": freeGet("Health and sanctions-data freshness", "getHealth", jsonBody("Healthy or degraded (stale data).", ref("Health")),
			obj{"503": jsonBody("No sanctions data loaded.", ref("Health"))}),
		"/healthz": freeGet("Liveness probe", "getHealthz", jsonBody("The process serves.", ref("Document")), nil),
		"/readyz": freeGet("Readiness probe: a sanctions list is loaded", "getReadyz", jsonBody("Ready for paid calls.", ref("Document")),
			obj{"503": jsonBody("No sanctions data loaded.", ref("Document"))}),
		"/status":       freeGet("Live status", "getStatus", jsonBody("Uptime, counters, facilitator check.", ref("Document")), nil),
		"/openapi.json": freeGet("This description", "getOpenAPI", jsonBody("OpenAPI 3.1.0.", obj{"type": "object"}), nil),
		"/llms.txt":     freeGet("Text summary for agents", "getLLMsTxt", textBody("Plain text."), nil),
		"/.well-known/x402": freeGet("Payment discovery: resources, prices, network, asset, payTo", "getX402Discovery",
			jsonBody("Payment discovery.", ref("Document")), nil),
		"/.well-known/agent-card.json": freeGet("A2A agent card", "getAgentCard", jsonBody("Agent card.", ref("Document")), nil),
		"/.well-known/mcp.json":        freeGet("MCP discovery", "getMCPDiscovery", jsonBody("MCP server card.", ref("Document")), nil),
		"/.well-known/payguard-keys.json": freeGet("Receipt verification keys (JWK Set; pin them)", "getReceiptKeys",
			jsonBody("Public JWK Set.", ref("JWKS")), obj{"503": errResp("receipt_signing_unavailable: keys unavailable.")}),
		"/mcp":                      mcpPath(i),
		"/":                         freeGet("The page for people: what the service is, whether paid calls work, links", "getHome", htmlBody("An HTML page."), nil),
		"/terms":                    freeGet("Terms of service", "getTerms", textBody("Plain text."), nil),
		"/privacy":                  freeGet("Privacy notice", "getPrivacy", textBody("Plain text."), nil),
		"/.well-known/security.txt": freeGet("Security contact (RFC 9116)", "getSecurityTxt", textBody("security.txt."), nil),
	}
	for _, path := range []string{"/v1/sample"} {
		paths[path].(obj)["get"].(obj)["responses"].(obj)["503"] = errResp("sanctions_data_unavailable.")
	}
	doc := obj{
		"openapi": "3.1.0",
		"info": obj{
			"title":   "payguard",
			"version": i.Version,
			"summary": "Payee screening and spend preflight for AI agents that pay with x402.",
			"description": "Pay per call with x402 (USDC on " + i.Network + ", asset " + i.Asset + ", payTo " + i.PayTo + "). " +
				"No account or API key. Informational screening only: not legal advice. Every response states data_as_of " +
				"(JSON member, and the X-Data-As-Of header). Errors share one body: ErrorBody.",
			"contact": obj{"name": "payguard security", "url": i.url("/.well-known/security.txt")},
		},
		"servers": []obj{{"url": i.BaseURL}},
		"tags": []obj{{"name": "paid", "description": "x402 per call"}, {"name": "free"},
			{"name": "mcp", "description": "Remote MCP server (JSON-RPC 2.0 over stateless Streamable HTTP)"}},
		"paths": paths,
		"components": obj{
			"securitySchemes": obj{"x402": obj{
				"type": "apiKey", "in": "header", "name": "PAYMENT-SIGNATURE",
				"description": "x402 payment per request. A call without payment answers 402 with the v2 challenge in the PAYMENT-REQUIRED " +
					"header (base64 JSON) and the v1 challenge as the JSON body. Retry with PAYMENT-SIGNATURE (v2) or X-PAYMENT (v1), a base64 " +
					"JSON PaymentPayload; the 200 carries PAYMENT-RESPONSE (v2) or X-PAYMENT-RESPONSE (v1). Terms: scheme exact, network " +
					i.Network + " (v1 name " + i.NetworkV1 + "), asset " + i.Asset + ", payTo " + i.PayTo + ", exact atomic amount per route.",
			}},
			"schemas": components,
		},
	}
	return json.MarshalIndent(doc, "", "  ")
}

// mcpPath describes POST /mcp at the HTTP level: a JSON-RPC 2.0 envelope. The tools, their arguments and
// results are described by the MCP server itself (tools/list) and by /.well-known/mcp.json.
func mcpPath(i Info) obj {
	var prices []string
	for _, t := range MCPTools {
		price := "free"
		if t.PricePath != "" {
			price = i.paid(t.PricePath).USD
		}
		prices = append(prices, t.Name+" ("+price+")")
	}
	plain := func(desc string) obj {
		return obj{"description": desc, "content": obj{"text/plain": obj{"schema": obj{"type": "string"}}}}
	}
	return obj{"post": obj{
		"summary": "Remote MCP server (stateless Streamable HTTP, JSON responses)",
		"description": "JSON-RPC 2.0 per POST; send Content-Type: application/json and Accept: application/json, text/event-stream. " +
			"Sequence: initialize (protocolVersion " + strings.Join(MCPProtocolVersions, ", ") + "), the notification " +
			"notifications/initialized, then tools/list, tools/call, resources/list, resources/read, prompts/list, prompts/get. " +
			"Tools: " + strings.Join(prices, ", ") + ". check_payee and preflight_payment use the free trial (shared with ?trial=1) " +
			"first. A paid tool without payment returns a tool result with isError true and the x402 PaymentRequired object " +
			"(resource mcp://tool/<name>) in structuredContent; the paid retry carries the PaymentPayload in " +
			"params._meta[\"x402/payment\"] and the result carries the SettleResponse in _meta[\"x402/payment-response\"]. " +
			"Bad arguments and unavailable data are tool errors, never charged. Body limit 128 KiB, read within 10 s. See " +
			i.url("/.well-known/mcp.json") + ".",
		"operationId": "mcp", "tags": []string{"mcp"}, "security": []obj{},
		"requestBody": obj{"required": true, "content": obj{"application/json": obj{"schema": obj{
			"description": "A JSON-RPC 2.0 request or notification.", "type": "object", "required": []string{"jsonrpc", "method"},
			"properties": obj{"jsonrpc": obj{"type": "string", "enum": []string{"2.0"}}, "id": obj{"type": []string{"string", "integer"}},
				"method": obj{"type": "string"}, "params": obj{"type": "object"}}}}}},
		"responses": obj{
			"200": obj{"description": "The JSON-RPC 2.0 response.", "headers": dataAsOfHeader(),
				"content": obj{"application/json": obj{"schema": obj{"type": "object"}}}},
			"202": obj{"description": "A notification was accepted (no body)."},
			"400": plain("Not a valid JSON-RPC message, a missing Accept type, or an unsupported Mcp-Protocol-Version."),
			"403": plain("A non-loopback Host on a loopback listener (DNS-rebinding protection)."),
			"405": plain("Only POST: the server is stateless (no GET event stream, no DELETE)."),
			"408": plain("The body did not arrive within 10 seconds."),
			"413": plain("The body is over 128 KiB."),
			"415": plain("Content-Type is not application/json."),
		},
	}}
}
