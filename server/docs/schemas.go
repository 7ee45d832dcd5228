package docs

import (
	"encoding/json"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/payguard/payguard/server/schema"
)

func nullable(t string, desc string) obj {
	return obj{"type": []string{t, "null"}, "description": desc}
}

func strArray(desc string) obj {
	return obj{"type": "array", "items": obj{"type": "string"}, "description": desc}
}

// schemas are the document's components. The request bodies (PreflightInput and its Rules) are derived from
// server/schema's Go types, the ones the MCP tools' inputSchemas come from, so the two cannot drift; the
// answers are written here and checked against the Go types that produce them (server/mcp's
// TestOpenAPIMatchesGoTypes).
func schemas() (obj, error) {
	input, rules, err := preflightInput()
	if err != nil {
		return nil, err
	}
	return obj{
		"ErrorBody": obj{
			"type":        "object",
			"description": "The one error shape of every non-402 error.",
			"required":    []string{"error", "data_as_of"},
			"properties": obj{
				"error": obj{"type": "object", "required": []string{"code", "message"}, "properties": obj{
					"code":    str("Machine-readable code, e.g. missing_input, invalid_json, too_deep, body_too_large, body_timeout, method_not_allowed, not_found, invalid_url, invalid_method, endpoint_not_listed, method_required, index_unavailable, sanctions_data_unavailable, receipt_signing_unavailable, facilitator_unavailable, trial_unavailable, settlement_outcome_unknown, internal_error."),
					"message": str("What went wrong and why."),
					"nonce":   str("settlement_outcome_unknown only: the payment authorization nonce to check on chain."),
				}},
				"data_as_of": str("Time of the sanctions data (RFC 3339), or 1970-01-01T00:00:00Z while no list is loaded."),
			},
		},
		"PaymentRequiredV1": obj{
			"type":        "object",
			"description": "x402 v1 PaymentRequirementsResponse (the 402 body), plus data_as_of and, for an exhausted trial, trial.",
			"required":    []string{"x402Version", "error", "accepts", "data_as_of"},
			"properties": obj{
				"x402Version": obj{"type": "integer", "enum": []int{1}},
				"error":       str("Why payment is required: Payment required, trial_exhausted, the facilitator's invalidReason or a settlement errorReason."),
				"accepts":     obj{"type": "array", "items": ref("PaymentRequirementV1")},
				"trial":       ref("TrialNotice"),
				"data_as_of":  str("Time of the sanctions data, or 1970-01-01T00:00:00Z while no list is loaded."),
			},
		},
		"PaymentRequirementV1": obj{
			"type":     "object",
			"required": []string{"scheme", "network", "maxAmountRequired", "resource", "payTo", "asset", "maxTimeoutSeconds"},
			"properties": obj{
				"scheme":            obj{"type": "string", "enum": []string{"exact"}},
				"network":           str("v1 network name, e.g. base or base-sepolia."),
				"maxAmountRequired": obj{"type": "string", "pattern": "^[0-9]+$", "description": "Exact price in atomic units."},
				"resource":          str("Resource URL."),
				"description":       str("What is paid for."),
				"mimeType":          str("Media type of the paid answer."),
				"payTo":             str("The service's wallet."),
				"maxTimeoutSeconds": obj{"type": "integer"},
				"asset":             str("Token contract."),
				"outputSchema":      obj{"type": "object"},
				"extra":             obj{"type": "object", "properties": obj{"name": str("EIP-712 name."), "version": str("EIP-712 version.")}},
			},
		},
		"TrialNotice": obj{
			"type":     "object",
			"required": []string{"exhausted", "limit", "used", "resets_at", "message"},
			"properties": obj{
				"exhausted": obj{"type": "boolean"},
				"limit":     obj{"type": "integer"},
				"used":      obj{"type": "integer"},
				"resets_at": obj{"type": "string", "format": "date-time"},
				"message":   str("Human-readable."),
			},
		},
		"CheckResult": obj{
			"type":     "object",
			"required": []string{"risk", "flags", "data_as_of"},
			"properties": obj{
				"risk":       obj{"type": "string", "enum": []string{"low", "medium", "high", "unknown"}, "description": "Strongest applicable signal; unknown is not low."},
				"flags":      strArray("sanctioned_address, sanctioned_name_exact, sanctioned_name_possible, invalid_domain, new_domain, domain_age_unknown, domain_no_dns, unrecognized_address (the address given is no wallet address of a recognized format: risk unknown, never low)."),
				"sanctions":  obj{"type": "object", "description": "Sanctions screening result."},
				"domain":     nullable("object", "Domain age and DNS result, null when no domain was given."),
				"data_as_of": str("Freshness of the sanctions data."),
				"data_as_of_source": obj{"type": "string", "enum": []string{"publish_date", "http_last_modified", "fetch_time", "file_mtime"},
					"description": "What data_as_of is: SDN.XML's publish date, the download's Last-Modified, the fetch time, or a local file's modification time."},
				"disclaimer": str("Informational-screening notice."),
			},
		},
		"PreflightInput": input,
		"Rules":          rules,
		"PreflightResult": obj{
			"type":     "object",
			"required": []string{"decision", "reasons", "receipt", "data_as_of"},
			"properties": obj{
				"decision":          obj{"type": "string", "enum": []string{"allow", "hold", "block"}},
				"reasons":           strArray("Each starts with allow:, hold: or block:. Not a closed set."),
				"chosen_option":     nullable("object", "The cheapest acceptable payment option."),
				"options_evaluated": obj{"type": "integer"},
				"payee":             nullable("object", "Payee screening detail."),
				"receipt": obj{"type": "object", "required": []string{"id", "ts", "input_sha256", "decision"}, "properties": obj{
					"id":           obj{"type": "string"},
					"ts":           obj{"type": "string"},
					"input_sha256": obj{"type": "string"},
					"decision":     obj{"type": "string"},
					"jws":          str("Compact JWS (ES256) binding every returned decision field; keys at /.well-known/payguard-keys.json."),
				}},
				"data_as_of":     str("Freshness of the sanctions data."),
				"index_evidence": obj{"description": "Present when Index data was used."},
			},
		},
		"EndpointResult": obj{
			"type":     "object",
			"required": []string{"url", "method", "observations", "index_updated_at", "data_as_of"},
			"properties": obj{
				"url":    obj{"type": "string"},
				"method": obj{"type": "string"},
				"observations": obj{"type": "array", "items": obj{"type": "object", "required": []string{"observed_at", "status", "usable"},
					"properties": obj{
						"observed_at": obj{"type": "string", "format": "date-time"},
						"status":      obj{"type": "integer"},
						"usable":      obj{"type": "boolean"},
						"challenge":   obj{"type": "object", "description": "The PaymentRequired seen, if any."},
						"error":       obj{"type": "string"},
						"source":      str("proxy_402 (a 402 a payguard proxy decoded), proxy_paid (a paid response it forwarded) or probe (an unpaid probe)."),
						"offers":      obj{"type": "array", "description": "The payment options offered: scheme, network (CAIP-2), asset, amount (atomic), pay_to.", "items": obj{"type": "object"}},
						"paid":        obj{"type": "object", "description": "The option a payment was released for (proxy_paid)."},
						"category":    str("The seller's category from its bazaar/discovery metadata."),
						"metadata":    obj{"type": "object", "description": "The seller's bazaar/discovery metadata as sent."},
					}}},
				"facts":            obj{"type": "object", "description": "Derived from the observations: live (true, false after three consecutive failed probes, null unknown), consecutive_failed_probes, payto_history (per network and asset: current payees and changes), price_history (per network and asset: samples, median, latest, points), category."},
				"index_updated_at": obj{"type": "string", "format": "date-time"},
				"data_as_of":       str("Freshness of the sanctions data."),
			},
		},
		"RulesDocument": obj{
			"type":       "object",
			"required":   []string{"rules", "data_as_of"},
			"properties": obj{"rules": ref("Rules"), "note": obj{"type": "string"}, "data_as_of": obj{"type": "string"}},
		},
		"Health": obj{
			"type":     "object",
			"required": []string{"status", "version", "sanctions", "data_as_of"},
			"properties": obj{
				"status":  obj{"type": "string", "enum": []string{"ok", "degraded", "unavailable"}},
				"version": obj{"type": "string", "description": "The HTTP API's version (openapi.json's info.version), not the build's: /status gives both."},
				"paid_calls": obj{"type": "object", "description": "Whether a paid call would be answered now, and if not why (no sanctions list, store, facilitator).",
					"properties": obj{"ok": obj{"type": "boolean"}, "why": obj{"type": "string"}}},
				"sanctions": obj{"type": "object", "required": []string{"ready"}, "properties": obj{
					"ready":       obj{"type": "boolean"},
					"data_as_of":  obj{"type": "string", "format": "date-time"},
					"age_seconds": obj{"type": "integer"},
					"stale":       obj{"type": "boolean", "description": "Older than 48 hours (two missed daily refreshes)."},
					"refresh":     obj{"description": "The refresher's last attempt, success and error."},
				}},
				"index": obj{"type": "object", "description": "Endpoint index: updated_at and whether it is fresh."},
				"facilitator": obj{"type": "object", "description": "Last /supported check of the x402 facilitator.",
					"properties": obj{"checked_at": obj{"type": "string"}, "ok": obj{"type": "boolean"}, "error": obj{"type": "string"}}},
				"data_as_of": obj{"type": "string"},
			},
		},
		"Document": obj{
			"type":        "object",
			"description": "A free JSON document; every one states data_as_of.",
			"required":    []string{"data_as_of"},
			"properties":  obj{"data_as_of": obj{"type": "string"}},
		},
		"JWKS": obj{
			"type":     "object",
			"required": []string{"keys"},
			"properties": obj{"keys": obj{"type": "array", "items": obj{"type": "object", "required": []string{"kty"},
				"properties": obj{"kty": obj{"type": "string"}, "kid": obj{"type": "string"}, "alg": obj{"type": "string"}}}}},
		},
	}, nil
}

// preflightInput is server/schema's Preflight as components: the body with its rules as a reference to the
// Rules component (the same object GET /v1/rules/default returns, documented once).
func preflightInput() (input, rules obj, err error) {
	s, err := schema.Preflight(nil)
	if err != nil {
		return nil, nil, err
	}
	s.Description = "SPEC §2's PreflightInput. A challenge or a cart is required in practice (no payment option found: block)."
	r := s.Properties["rules"]
	r.Description = "Every rule optional; omitted rules keep the defaults (GET /v1/rules/default). " + r.Description
	s.Properties["rules"] = &jsonschema.Schema{Ref: "#/components/schemas/Rules"}
	if input, err = asObj(s); err != nil {
		return nil, nil, err
	}
	if rules, err = asObj(r); err != nil {
		return nil, nil, err
	}
	return input, rules, nil
}

func asObj(s *jsonschema.Schema) (obj, error) {
	b, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	var o obj
	return o, json.Unmarshal(b, &o)
}
