package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/payguard/payguard/server/core"
	"github.com/payguard/payguard/server/fees"
	"github.com/payguard/payguard/server/schema"
)

// Tool names (SPEC §8.5 MCP section).
const (
	ToolCheckPayee     = "check_payee"
	ToolPreflight      = "preflight_payment"
	ToolServiceInfo    = "get_service_info"
	ToolCheckEndpoint  = "check_endpoint"
	resourceURLPrefix  = "mcp://tool/"
	mcpTransportBazaar = "streamable-http"
)

// toolDef is one tool's listing.
type toolDef struct {
	name, title, description string
	schema                   *jsonschema.Schema
}

func (h *Handler) keysURL() string { return h.baseURL + "/.well-known/payguard-keys.json" }

// buildTools computes the input schemas and the paid tools' offers (price of the HTTP route, resource URL
// mcp://tool/<name>, no offer-receipt, an MCP bazaar extension so facilitators can catalogue the tool).
func (h *Handler) buildTools() error {
	h.tools = map[string]*paidTool{}
	for _, t := range []*paidTool{
		{name: ToolCheckPayee, route: core.RouteCheck},
		{name: ToolPreflight, route: core.RoutePreflight},
		{name: ToolCheckEndpoint, route: core.RouteEndpoint},
	} {
		t.offer = fees.Offer{URL: resourceURLPrefix + t.name, Description: t.route.Description,
			MimeType: "application/json", Amount: t.route.Price}
		h.tools[t.name] = t
	}
	defs, err := h.toolDefs()
	if err != nil {
		return err
	}
	for _, d := range defs {
		t := h.tools[d.name]
		if t == nil {
			continue
		}
		t.offer.Description = fmt.Sprintf("payguard MCP tool %s: %s", d.name, d.title)
		bazaar, err := bazaarMCP(d)
		if err != nil {
			return err
		}
		t.offer.Bazaar = bazaar
	}
	h.defs = defs
	return nil
}

// bazaarMCP is the x402 bazaar discovery extension for an MCP tool ({info:{input:{type:"mcp", toolName,
// description, transport, inputSchema}}, schema}), the shape @x402/extensions declares for MCP tools.
func bazaarMCP(d toolDef) (json.RawMessage, error) {
	// The challenge carries the schema without its descriptions: a model reads every payment-required
	// result, and a paying client echoes the extension back in its payment. tools/list has the full text.
	raw, err := json.Marshal(d.schema)
	if err != nil {
		return nil, err
	}
	var compact any
	if err := json.Unmarshal(raw, &compact); err != nil {
		return nil, err
	}
	stripDescriptions(compact)
	str := map[string]any{"type": "string"}
	ext := map[string]any{
		"info": map[string]any{"input": map[string]any{
			"type": "mcp", "toolName": d.name, "description": d.title, "transport": mcpTransportBazaar,
			"inputSchema": compact,
		}},
		"schema": map[string]any{
			"$schema": "https://json-schema.org/draft/2020-12/schema",
			"type":    "object",
			"properties": map[string]any{"input": map[string]any{
				"type": "object",
				"properties": map[string]any{
					"type": map[string]any{"type": "string", "const": "mcp"}, "toolName": str, "description": str,
					"transport":   map[string]any{"type": "string", "enum": []string{mcpTransportBazaar}},
					"inputSchema": map[string]any{"type": "object"},
				},
				"required":             []string{"type", "toolName", "inputSchema"},
				"additionalProperties": false,
			}},
			"required": []string{"input"},
		},
	}
	return json.Marshal(ext)
}

// stripDescriptions removes the string-valued "description" keywords of a decoded schema (a property that
// happens to be named description has an object value and stays).
func stripDescriptions(v any) {
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			if _, isText := val.(string); isText && k == "description" {
				delete(x, k)
				continue
			}
			stripDescriptions(val)
		}
	case []any:
		for _, e := range x {
			stripDescriptions(e)
		}
	}
}

func (h *Handler) price(name string) string { return fees.USD(h.tools[name].offer.Amount) }

// toolDefs are the four tools' names, descriptions (written for a model choosing and reading a tool) and
// input schemas.
func (h *Handler) toolDefs() ([]toolDef, error) {
	checkS, err := schema.CheckPayee()
	if err != nil {
		return nil, err
	}
	preS, err := schema.Preflight(&h.opt.Rules)
	if err != nil {
		return nil, err
	}
	endS, err := schema.CheckEndpoint()
	if err != nil {
		return nil, err
	}
	infoS, err := schema.ServiceInfo()
	if err != nil {
		return nil, err
	}
	limit := h.core.Trial().Limit()
	trial := fmt.Sprintf("The first %d calls per IP per UTC day are free (shared with preflight_payment/check_payee "+
		"and the HTTP API); after that the tool returns an x402 payment-required result and a paid call carries the "+
		"payment in params._meta[%q].", limit, MetaPayment)
	return []toolDef{
		{name: ToolCheckPayee, title: "Screen a payee (sanctions, domain age, DNS)", schema: checkS,
			description: "Screen a payee before paying it: a wallet address against the OFAC SDN list, a merchant or " +
				"person name against SDN names and aliases, and a merchant domain's registration age and DNS records. " +
				"Returns a CheckResult: risk (low, medium, high or unknown; unknown is NOT low), flags (sanctioned_address, " +
				"sanctioned_name_exact, sanctioned_name_possible, invalid_domain, new_domain, domain_age_unknown, " +
				"domain_no_dns, unrecognized_address: not a wallet address, risk unknown), sanctions and domain details, data_as_of and a disclaimer. A name match is not proof of " +
				"identity: verify before acting. Price " + h.price(ToolCheckPayee) + " in USDC via x402. " + trial +
				" Informational screening only, not legal advice."},
		{name: ToolPreflight, title: "Decide allow, hold or block before paying", schema: preS,
			description: "Call this BEFORE signing a payment: give the x402 challenge a seller answered with (or a cart " +
				"priced in USD) and optional spending rules. Returns a PreflightResult: decision (allow, hold or block), " +
				"reasons (each starting with allow:, hold: or block:), chosen_option (the cheapest acceptable payment " +
				"option), options_evaluated, payee screening, data_as_of and a signed receipt (receipt.id, receipt.jws: a " +
				"JWS over the decision, verifiable with the keys at " + h.keysURL() + "). Pay only on allow and only the " +
				"chosen_option; route hold to a human or policy authority; never pay on block; keep receipt.id. An error " +
				"result means screening is unavailable: treat it as hold. A hold or block is a delivered, charged result. " +
				"Price " + h.price(ToolPreflight) + " in USDC via x402. " + trial},
		{name: ToolServiceInfo, title: "Prices, payment terms and data freshness (free)", schema: infoS,
			description: "Always free. Returns payguard's prices per tool, the payment terms of its own fees (x402 " +
				"scheme, network, USDC asset, payTo wallet), the free-trial allowance, the receipt-key URL, whether " +
				"sanctions data is loaded and its data_as_of, and the disclaimer."},
		{name: ToolCheckEndpoint, title: "Cached observations of an x402 endpoint", schema: endS,
			description: "Look up payguard's index of public x402 endpoints: the cached unpaid observations of a URL " +
				"(time, HTTP status, whether the probe was usable, the challenge it returned). Needs fresh index data; " +
				"otherwise an index_unavailable error that is not charged. An unknown URL is endpoint_not_listed and a " +
				"URL observed with several methods needs method (method_required); neither is charged. Price " +
				h.price(ToolCheckEndpoint) + " in USDC via x402; no free trial."},
	}, nil
}

func (h *Handler) addTools() {
	readOnly := &sdk.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(true)}
	tool := func(name string) *sdk.Tool {
		for _, d := range h.defs {
			if d.name == name {
				return &sdk.Tool{Name: d.name, Title: d.title, Description: d.description, InputSchema: d.schema,
					Annotations: readOnly}
			}
		}
		panic("mcp: no tool " + name) // toolDefs and this list are in one file
	}
	sdk.AddTool(h.mcp, tool(ToolCheckPayee), h.checkPayee)
	sdk.AddTool(h.mcp, tool(ToolPreflight), h.preflight)
	sdk.AddTool(h.mcp, tool(ToolServiceInfo), h.serviceInfo)
	sdk.AddTool(h.mcp, tool(ToolCheckEndpoint), h.checkEndpoint)
}

// checkPayee is the check operation (/v1/check's). Its text is read from the arguments as sent
// (core.StringArgs), not from in: the SDK's decoding has turned bytes that are not UTF-8 into U+FFFD, and the
// core must see them to refuse them before payment, as it does over HTTP.
func (h *Handler) checkPayee(ctx context.Context, req *sdk.CallToolRequest, _ CheckPayeeArgs) (*sdk.CallToolResult, any, error) {
	args, e := core.StringArgs(req.Params.Arguments)
	if e != nil {
		return h.errorResult(e), nil, nil
	}
	op, e := h.core.Check(core.CheckQuery{Name: strings.TrimSpace(args["name"]), Address: strings.TrimSpace(args["wallet"]),
		Domain: strings.TrimSpace(args["domain"])})
	if e != nil {
		return h.errorResult(e), nil, nil
	}
	return h.sell(ctx, req, h.tools[ToolCheckPayee], op), nil, nil
}

func (h *Handler) preflight(ctx context.Context, req *sdk.CallToolRequest, _ PreflightArgs) (*sdk.CallToolResult, any, error) {
	// The arguments as sent are the PreflightInput: the engine's own parser enforces SPEC §10's limits on them and
	// the receipt's input_sha256 hashes them, as it hashes the HTTP body.
	// A copy: the operation keeps the bytes it is given (core.Service.Preflight), and these are the SDK's.
	raw := bytes.Clone(req.Params.Arguments)
	if s := strings.TrimSpace(string(raw)); s == "" || s == "null" {
		raw = []byte("{}")
	}
	op, e := h.core.Preflight(raw)
	if e != nil {
		return h.errorResult(e), nil, nil
	}
	return h.sell(ctx, req, h.tools[ToolPreflight], op), nil, nil
}

// checkEndpoint is the endpoint operation (/v1/endpoint's): URL and method checked, index fresh, the URL
// listed and its method known, all before payment. The text is read as sent, as in checkPayee.
func (h *Handler) checkEndpoint(ctx context.Context, req *sdk.CallToolRequest, _ CheckEndpointArgs) (*sdk.CallToolResult, any, error) {
	args, e := core.StringArgs(req.Params.Arguments)
	if e != nil {
		return h.errorResult(e), nil, nil
	}
	op, e := h.core.Endpoint(ctx, args["url"], args["method"], false)
	if e != nil {
		return h.errorResult(e), nil, nil
	}
	return h.sell(ctx, req, h.tools[ToolCheckEndpoint], op), nil, nil
}

func (h *Handler) serviceInfo(ctx context.Context, req *sdk.CallToolRequest, _ ServiceInfoArgs) (*sdk.CallToolResult, any, error) {
	return h.result(h.serviceInfoBody()), nil, nil
}
