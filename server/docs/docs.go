// Package docs generates payguard serve's free documents from the deployment's configuration: the OpenAPI
// 3.1 description, llms.txt, payment discovery (/.well-known/x402), the A2A agent card, MCP discovery, the
// terms, the privacy notice and security.txt. Prices, paths, network, asset and wallet come from Info, so
// the documents always say what the server does.
package docs

import (
	"fmt"
	"strings"
	"time"
)

// Info is everything the documents are generated from.
type Info struct {
	BaseURL                 string // origin, no trailing slash
	Version                 string // service version, e.g. "1.0.0"
	Contact                 string // mailto: or https: security contact
	Network                 string // CAIP-2
	NetworkV1               string // v1 name of Network
	Asset                   string
	AssetName               string // EIP-712 domain name of the asset
	PayTo                   string
	MaxTimeoutSeconds       int64
	FacilitatorURL          string
	TrialLimit              int
	TrialRetention          time.Duration
	IndexFreshness          time.Duration
	SettlementUnknownStatus int
	Paid                    []PaidResource
}

// PaidResource is one paid route and its price.
type PaidResource struct {
	Path         string
	Method       string
	Amount       uint64 // atomic units of the asset
	USD          string // "$0.01"
	Description  string
	Trial        bool
	OfferReceipt bool
}

// MCPTools are the tools the MCP endpoint at /mcp offers (SPEC §8.5 MCP section), with the paid route whose
// price each one charges ("" for a free tool). server/mcp's tests check this list against the live server.
var MCPTools = []struct{ Name, Description, PricePath string }{
	{"check_payee", "Screen a payee's name, merchant domain or wallet (OFAC SDN, domain age, DNS). Free trial first, then x402.", "/v1/check"},
	{"preflight_payment", "Decide allow, hold or block for an x402 challenge or a cart, with a signed receipt. Free trial first, then x402.", "/v1/preflight"},
	{"get_service_info", "Prices, payment terms, data freshness and links. Always free.", ""},
	{"check_endpoint", "Cached unpaid observations of a public x402 endpoint. x402 only, no trial.", "/v1/endpoint"},
}

// MCPResources and MCPPrompts are the MCP server's free resources and its prompts (SPEC §8.5 MCP section).
var (
	MCPResources = []struct{ URI, Name, Description string }{
		{"payguard://rules/default", "default-rules", "The rules preflight_payment applies by default."},
		{"payguard://pricing", "pricing", "Price of each tool, the x402 terms of payguard's fees and the free-trial allowance."},
		{"payguard://trust", "trust", "Receipt verification keys, sanctions-data freshness, data handling and the disclaimer."},
	}
	MCPPrompts = []struct {
		Name, Description string
		Arguments         []string
	}{
		{"preflight-before-paying", "Preflight an x402 challenge or a cart before paying, and act on allow, hold or block.",
			[]string{"challenge", "rules", "spent_today_usd"}},
		{"check-a-merchant", "Screen a merchant's domain, name or wallet and explain the result.", []string{"domain", "name", "wallet"}},
	}
	// MCPProtocolVersions are the MCP versions /mcp negotiates (SPEC §8.5 samples the first).
	MCPProtocolVersions = []string{"2025-03-26", "2025-06-18", "2025-11-25"}
)

func (i Info) url(path string) string { return i.BaseURL + path }

func (i Info) paid(path string) PaidResource {
	for _, p := range i.Paid {
		if p.Path == path {
			return p
		}
	}
	return PaidResource{Path: path}
}

// X402Discovery is /.well-known/x402: every paid resource with its exact terms.
func X402Discovery(i Info) map[string]any {
	resources := make([]map[string]any, 0, len(i.Paid))
	for _, p := range i.Paid {
		resources = append(resources, map[string]any{
			"resource":          i.url(p.Path),
			"method":            p.Method,
			"description":       p.Description,
			"mimeType":          "application/json",
			"price_usd":         strings.TrimPrefix(p.USD, "$"),
			"amount":            fmt.Sprint(p.Amount),
			"scheme":            "exact",
			"network":           i.Network,
			"network_v1":        i.NetworkV1,
			"asset":             i.Asset,
			"asset_name":        i.AssetName,
			"payTo":             i.PayTo,
			"maxTimeoutSeconds": i.MaxTimeoutSeconds,
			"free_trial":        p.Trial,
			"offer_receipt":     p.OfferReceipt,
		})
	}
	return map[string]any{
		"x402Version":     2,
		"accepts_version": []int{1, 2},
		"service":         "payguard",
		"version":         i.Version,
		"network":         i.Network,
		"asset":           i.Asset,
		"payTo":           i.PayTo,
		"facilitator":     i.FacilitatorURL,
		"resources":       resources,
		"headers": map[string]any{
			"challenge_v2":  "PAYMENT-REQUIRED",
			"payment_v2":    "PAYMENT-SIGNATURE",
			"settlement_v2": "PAYMENT-RESPONSE",
			"payment_v1":    "X-PAYMENT",
			"settlement_v1": "X-PAYMENT-RESPONSE",
		},
		"receipt_keys": i.url("/.well-known/payguard-keys.json"),
		"free_trial": map[string]any{
			"parameter":       "trial=1",
			"calls_per_day":   i.TrialLimit,
			"per":             "client IP, UTC day, shared with MCP",
			"exhausted_reply": 402,
		},
	}
}

// AgentCard is the A2A agent card at /.well-known/agent-card.json.
func AgentCard(i Info) map[string]any {
	return map[string]any{
		"protocolVersion":    "0.3.0",
		"name":               "payguard",
		"description":        "Payee screening and spend preflight for AI agents that pay with x402: call it before paying a merchant or wallet. Informational screening only, not legal advice.",
		"url":                i.BaseURL,
		"preferredTransport": "HTTP+JSON",
		"version":            i.Version,
		"provider":           map[string]any{"organization": "payguard", "url": i.BaseURL},
		"documentationUrl":   i.url("/openapi.json"),
		"capabilities":       map[string]any{"streaming": false, "pushNotifications": false, "stateTransitionHistory": false},
		"securitySchemes": map[string]any{
			"x402": map[string]any{"type": "apiKey", "in": "header", "name": "PAYMENT-SIGNATURE",
				"description": "x402 payment per request (v2 PAYMENT-SIGNATURE or v1 X-PAYMENT); no account or API key"},
		},
		"defaultInputModes":  []string{"application/json"},
		"defaultOutputModes": []string{"application/json"},
		"skills": []map[string]any{
			{"id": "check_payee", "name": "Payee check", "tags": []string{"sanctions", "ofac", "domain", "x402"},
				"description": fmt.Sprintf("GET %s (%s): screen a wallet address and a name against the OFAC SDN list, and a merchant domain's age and DNS.", i.url("/v1/check"), i.paid("/v1/check").USD),
				"examples":    []string{"Is wallet 0x... on a sanctions list?", "Check merchant example.com before paying"}},
			{"id": "preflight_payment", "name": "Spend preflight", "tags": []string{"x402", "payments", "policy"},
				"description": fmt.Sprintf("POST %s (%s): allow, hold or block an x402 402 challenge or a cart under spending rules; signed receipt.", i.url("/v1/preflight"), i.paid("/v1/preflight").USD),
				"examples":    []string{"Should I pay this 402 challenge?"}},
			{"id": "check_endpoint", "name": "Endpoint lookup", "tags": []string{"x402", "index"},
				"description": fmt.Sprintf("GET %s (%s): cached unpaid observations of a public x402 endpoint.", i.url("/v1/endpoint"), i.paid("/v1/endpoint").USD),
				"examples":    []string{"What did https://api.example.com/data answer recently?"}},
		},
	}
}

// MCPDiscovery is /.well-known/mcp.json: where the MCP server is, how to talk to it, what it offers and how
// its paid tools are paid.
func MCPDiscovery(i Info) map[string]any {
	tools := make([]map[string]any, 0, len(MCPTools))
	for _, t := range MCPTools {
		tool := map[string]any{"name": t.Name, "description": t.Description, "price": "free", "free_trial": false}
		if t.PricePath != "" {
			p := i.paid(t.PricePath)
			tool["price"], tool["amount"], tool["free_trial"] = p.USD, fmt.Sprint(p.Amount), p.Trial
			tool["resource"] = "mcp://tool/" + t.Name
		}
		tools = append(tools, tool)
	}
	resources := make([]map[string]any, 0, len(MCPResources))
	for _, r := range MCPResources {
		resources = append(resources, map[string]any{"uri": r.URI, "name": r.Name, "description": r.Description, "mimeType": "application/json"})
	}
	prompts := make([]map[string]any, 0, len(MCPPrompts))
	for _, p := range MCPPrompts {
		prompts = append(prompts, map[string]any{"name": p.Name, "description": p.Description, "arguments": p.Arguments})
	}
	return map[string]any{
		"name":             "payguard",
		"version":          i.Version,
		"description":      "payguard's remote MCP server: payee screening and spend preflight for agents that pay with x402.",
		"endpoint":         i.url("/mcp"),
		"transport":        "streamable-http",
		"stateless":        true,
		"protocolVersion":  MCPProtocolVersions[0],
		"protocolVersions": MCPProtocolVersions,
		"request_headers":  map[string]any{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"},
		"capabilities":     map[string]any{"tools": true, "resources": true, "prompts": true},
		"authentication":   map[string]any{"type": "none", "payment": "x402 in tools/call params._meta[\"x402/payment\"]; free trial first"},
		"payment": map[string]any{
			"x402Version": 2, "scheme": "exact", "network": i.Network, "asset": i.Asset, "payTo": i.PayTo,
			"payment_meta_key": "x402/payment", "settlement_meta_key": "x402/payment-response",
			"payment_required": "a tool result with isError true, the PaymentRequired object in structuredContent and as JSON in content[0].text",
		},
		"free_trial": map[string]any{"calls_per_day": i.TrialLimit, "per": "client IP, UTC day, shared with the HTTP API's ?trial=1",
			"tools": []string{"check_payee", "preflight_payment"}},
		"tools":     tools,
		"resources": resources,
		"prompts":   prompts,
	}
}
