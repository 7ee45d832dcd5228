// Package schema holds the request types of the pay-per-call operations and the JSON Schemas derived from
// them: the one source of both the MCP tools' inputSchemas (server/mcp) and /openapi.json's request
// components (server/docs). The schemas are inferred from the Go types with the MCP go-sdk's jsonschema
// (descriptions from the jsonschema tags) and then tightened with the parsers' limits, so a field added to a
// type appears in both documents at once. server/mcp's TestOpenAPIMatchesGoTypes checks the types against the
// ones the engines read (preflight.Input, policy.Rules).
package schema

import (
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/payguard/payguard/policy"
	"github.com/payguard/payguard/preflight"
	"github.com/payguard/payguard/screening"
)

// The tools' arguments. Their JSON Schemas are inferred from these types (descriptions from the jsonschema
// tags) and then tightened by the builders below: bounds from the parsers' limits, and explicit object
// schemas for the free-form x402 members. No property is left schema-less: the official TypeScript client
// refuses a tool whose inputSchema has a property that is not an object schema (a bare `true`).

// CheckPayeeArgs are check_payee's arguments.
type CheckPayeeArgs struct {
	Name   string `json:"name,omitempty" jsonschema:"Merchant or payee legal name, screened against OFAC SDN names and aliases (exact and fuzzy). Example: Acme Widgets LLC"`
	Domain string `json:"domain,omitempty" jsonschema:"Merchant domain or URL, e.g. example.com or https://shop.example.com/pay: registration age (RDAP) and DNS A/MX records"`
	Wallet string `json:"wallet,omitempty" jsonschema:"Payee wallet address (e.g. an EVM 0x address), matched exactly against OFAC SDN digital-currency addresses"`
}

// PreflightArgs are preflight_payment's arguments: SPEC §2's PreflightInput.
type PreflightArgs struct {
	Challenge      *Challenge    `json:"challenge,omitempty" jsonschema:"The x402 PaymentRequired object a seller answered with (v1: the 402 JSON body; v2: the decoded PAYMENT-REQUIRED header), passed unchanged. Give this or cart."`
	Cart           *Cart         `json:"cart,omitempty" jsonschema:"A checkout already priced in USD, instead of an x402 challenge"`
	ResourceURL    string        `json:"resource_url,omitempty" jsonschema:"URL of the paid resource, used when the challenge does not name it (the merchant domain is taken from it)"`
	ResourceMethod string        `json:"resource_method,omitempty" jsonschema:"HTTP method of the paid resource (GET, POST, ...), needed when the endpoint index knows several methods for the URL"`
	Rules          *Rules        `json:"rules,omitempty" jsonschema:"Spending rules overriding the defaults field by field (snake_case); every rule is optional. Read the resource payguard://rules/default for the defaults."`
	Context        *SpendContext `json:"context,omitempty" jsonschema:"The caller's own state: what it already spent today and who it is"`
}

// Challenge is an x402 PaymentRequired object, kept as sent (its members are x402's, and the decision
// engine reads them with x402's own parser).
type Challenge map[string]any

// Cart is SPEC §2's cart.
type Cart struct {
	MerchantDomain string  `json:"merchant_domain,omitempty" jsonschema:"Merchant domain, e.g. shop.example.com"`
	TotalUSD       float64 `json:"total_usd" jsonschema:"Total to pay, already in US dollars, e.g. 0.25"`
	PayTo          string  `json:"pay_to,omitempty" jsonschema:"Payee wallet address"`
	MerchantName   string  `json:"merchant_name,omitempty" jsonschema:"Merchant legal name, screened against OFAC SDN names"`
}

// Rules are SPEC §3's rules, every one optional. Pointers tell "not given" from zero values.
type Rules struct {
	MaxPerPaymentUSD  *float64 `json:"max_per_payment_usd,omitempty" jsonschema:"Block when the selected amount exceeds this many USD"`
	HoldAboveUSD      *float64 `json:"hold_above_usd,omitempty" jsonschema:"Hold above this many USD when the maximum has not already blocked"`
	DailyCapUSD       *float64 `json:"daily_cap_usd,omitempty" jsonschema:"Block when context.spent_today_usd plus the quote exceeds this many USD"`
	AllowedNetworks   []string `json:"allowed_networks,omitempty" jsonschema:"Allowed payment networks (CAIP-2 such as eip155:8453, or x402 v1 names such as base)"`
	USDCOnly          *bool    `json:"usdc_only,omitempty" jsonschema:"Require a recognized USDC contract on the network (other tokens are not assumed to equal USD)"`
	StrictAllowlist   *bool    `json:"strict_allowlist,omitempty" jsonschema:"Hold a merchant domain outside domain_allowlist; a non-empty payto_allowlist also requires that payee"`
	NewDomainDays     *int     `json:"new_domain_days,omitempty" jsonschema:"Hold a known domain registration age below this many days unless allowlisted"`
	ScreenSanctions   *bool    `json:"screen_sanctions,omitempty" jsonschema:"Screen OFAC SDN wallet and name matches; false removes that protection"`
	MaxPriceMultiple  *float64 `json:"max_price_multiple,omitempty" jsonschema:"Hold above this multiple of the public category median price; null disables"`
	RequireLive       *bool    `json:"require_live,omitempty" jsonschema:"Hold after three usable failed unpaid probes of the endpoint (missing observations stay unknown)"`
	HoldOnPayToChange *bool    `json:"hold_on_payto_change,omitempty" jsonschema:"Hold when the payee changed in the last seven days of observations or differs from the latest one"`
	DomainAllowlist   []string `json:"domain_allowlist,omitempty" jsonschema:"Approved merchant domains (each covers its subdomains; no wildcard syntax)"`
	DomainBlocklist   []string `json:"domain_blocklist,omitempty" jsonschema:"Blocked merchant domains and their subdomains; a block outranks any approval"`
	PayToAllowlist    []string `json:"payto_allowlist,omitempty" jsonschema:"Approved payee wallets (EVM addresses ignore letter case)"`
	PayToBlocklist    []string `json:"payto_blocklist,omitempty" jsonschema:"Blocked payee wallets; a block outranks any approval"`
}

// SpendContext is SPEC §2's context object.
type SpendContext struct {
	SpentTodayUSD float64 `json:"spent_today_usd,omitempty" jsonschema:"USD the caller already spent today by its own ledger, counted against daily_cap_usd"`
	AgentID       string  `json:"agent_id,omitempty" jsonschema:"The calling agent's identifier, for the caller's own records"`
}

// CheckEndpointArgs are check_endpoint's arguments.
type CheckEndpointArgs struct {
	URL    string `json:"url" jsonschema:"Absolute http(s) URL of a public x402 endpoint, as the index lists it (no credentials, no fragment)"`
	Method string `json:"method,omitempty" jsonschema:"HTTP method, needed when the URL was observed with several methods"`
}

// ServiceInfoArgs are get_service_info's arguments: none.
type ServiceInfoArgs struct{}

func ptr[T any](v T) *T { return &v }

// inferSchema derives T's schema with the given type overrides, then removes the "null" the inference adds
// to pointers and slices: an optional member is omitted, not null.
func inferSchema[T any](overrides map[reflect.Type]*jsonschema.Schema) (*jsonschema.Schema, error) {
	s, err := jsonschema.For[T](&jsonschema.ForOptions{TypeSchemas: overrides})
	if err != nil {
		return nil, fmt.Errorf("schema: schema of %T: %w", *new(T), err)
	}
	dropNull(s)
	return s, nil
}

func dropNull(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	if len(s.Types) == 2 && s.Types[0] == "null" {
		s.Type, s.Types = s.Types[1], nil
	}
	for _, p := range s.Properties {
		dropNull(p)
	}
	dropNull(s.Items)
}

// CheckPayee is check_payee's (and GET /v1/check's) arguments.
func CheckPayee() (*jsonschema.Schema, error) {
	s, err := inferSchema[CheckPayeeArgs](nil)
	if err != nil {
		return nil, err
	}
	s.Properties["name"].MaxLength = ptr(screening.MaxNameLen)
	s.Properties["domain"].MaxLength = ptr(screening.MaxDomainLen)
	s.Properties["wallet"].MaxLength = ptr(screening.MaxAddressLen)
	s.Description = "Give at least one of name, domain or wallet."
	return s, nil
}

// CheckEndpoint is check_endpoint's (and GET /v1/endpoint's) arguments.
func CheckEndpoint() (*jsonschema.Schema, error) {
	s, err := inferSchema[CheckEndpointArgs](nil)
	if err != nil {
		return nil, err
	}
	s.Properties["url"].MaxLength = ptr(2048)
	s.Properties["url"].MinLength = ptr(1)
	s.Properties["method"].Enum = []any{"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"}
	return s, nil
}

// ServiceInfo is get_service_info's arguments: none.
func ServiceInfo() (*jsonschema.Schema, error) {
	return inferSchema[ServiceInfoArgs](nil)
}

// Preflight is PreflightArgs (SPEC §2's PreflightInput) with the challenge as an explicit x402 object schema,
// the parsers' bounds, and, when defaults is not nil, the deployment's defaults in the rules' descriptions
// (the MCP tool states them; /openapi.json points to GET /v1/rules/default instead).
func Preflight(defaults *policy.Rules) (*jsonschema.Schema, error) {
	s, err := inferSchema[PreflightArgs](map[reflect.Type]*jsonschema.Schema{reflect.TypeFor[Challenge](): challengeSchema()})
	if err != nil {
		return nil, err
	}
	text := preflight.MaxTextBytes
	for _, name := range []string{"resource_url", "resource_method"} {
		s.Properties[name].MaxLength = ptr(text)
	}
	cart := s.Properties["cart"]
	for _, name := range []string{"merchant_domain", "pay_to", "merchant_name"} {
		cart.Properties[name].MaxLength = ptr(text)
	}
	cart.Properties["total_usd"].Minimum = ptr(0.0)
	ctx := s.Properties["context"]
	ctx.Properties["spent_today_usd"].Minimum = ptr(0.0)
	ctx.Properties["agent_id"].MaxLength = ptr(text)

	rules := s.Properties["rules"]
	var def map[string]any
	if defaults != nil {
		if b, err := json.Marshal(defaults); err == nil {
			_ = json.Unmarshal(b, &def)
		}
	}
	for name, p := range rules.Properties {
		switch p.Type {
		case "number":
			p.Minimum = ptr(0.0)
		case "integer":
			p.Minimum = ptr(0.0)
		case "array":
			p.MaxItems = ptr(policy.MaxListEntries)
			p.Items.MaxLength = ptr(text)
		}
		if v, ok := def[name]; ok {
			if b, err := json.Marshal(v); err == nil {
				p.Description += ". Default here: " + string(b)
			}
		}
	}
	// null is meaningful for this one rule: it disables the price check.
	mpm := rules.Properties["max_price_multiple"]
	mpm.Type, mpm.Types, mpm.Minimum = "", []string{"number", "null"}, nil
	mpm.ExclusiveMinimum = ptr(0.0)
	return s, nil
}

// challengeSchema describes an x402 PaymentRequired object (v1 or v2) as far as payguard reads it, and
// allows the members it does not (extensions, vendor fields), which x402 lets sellers add.
func challengeSchema() *jsonschema.Schema {
	str := func(d string) *jsonschema.Schema { return &jsonschema.Schema{Type: "string", Description: d} }
	obj := func(d string) *jsonschema.Schema { return &jsonschema.Schema{Type: "object", Description: d} }
	option := &jsonschema.Schema{
		Type:        "object",
		Description: "One payment option (an accepts[] entry)",
		Required:    []string{"scheme", "network"},
		Properties: map[string]*jsonschema.Schema{
			"scheme":            str("Payment scheme, e.g. exact"),
			"network":           str("Network: CAIP-2 in v2 (eip155:8453), a name in v1 (base)"),
			"amount":            str("v2: amount in the asset's atomic units, a decimal string"),
			"maxAmountRequired": str("v1: amount in the asset's atomic units, a decimal string"),
			"asset":             str("Token contract address"),
			"payTo":             str("Payee wallet address"),
			"maxTimeoutSeconds": {Type: "integer", Description: "How long a signed payment stays valid, in seconds"},
			"resource":          str("v1: URL of the paid resource"),
			"description":       str("v1: what is being paid for"),
			"mimeType":          str("v1: media type of the paid response"),
			"extra":             obj("Scheme data, e.g. the token's EIP-712 name and version"),
			"outputSchema":      obj("v1: discovery metadata of the resource"),
		},
	}
	return &jsonschema.Schema{
		Type:     "object",
		Required: []string{"x402Version", "accepts"},
		Properties: map[string]*jsonschema.Schema{
			"x402Version": {Type: "integer", Enum: []any{1, 2}, Description: "x402 protocol version of the challenge: 1 or 2"},
			"error":       str("The seller's error text"),
			"resource": {Type: "object", Description: "v2: the paid resource",
				Properties: map[string]*jsonschema.Schema{
					"url":         str("URL of the paid resource"),
					"description": str("What is being paid for"),
					"mimeType":    str("Media type of the paid response"),
				}},
			"accepts": {Type: "array", Description: "The payment options; payguard evaluates each and picks the cheapest acceptable one",
				MaxItems: ptr(preflight.MaxOptions), Items: option},
			"extensions": obj("v2: x402 extensions (bazaar, offer-receipt, ...), keyed by name"),
		},
	}
}
