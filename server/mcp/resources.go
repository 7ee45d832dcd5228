package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/payguard/payguard/screening"
	"github.com/payguard/payguard/server/core"
	"github.com/payguard/payguard/server/fees"
)

// Resource URIs. They are payguard's own scheme: documents of this server, not web pages.
const (
	ResourceRules   = "payguard://rules/default"
	ResourcePricing = "payguard://pricing"
	ResourceTrust   = "payguard://trust"
)

// Prompt names (SPEC §8.5 MCP section).
const (
	PromptPreflight     = "preflight-before-paying"
	PromptCheckMerchant = "check-a-merchant"
)

// pricing is the price list and the payment terms of payguard's own fees.
func (h *Handler) pricing() map[string]any {
	t := h.core.Seller().Terms()
	tools := []map[string]any{}
	for _, name := range []string{ToolCheckPayee, ToolPreflight, ToolCheckEndpoint} {
		pt := h.tools[name]
		tools = append(tools, map[string]any{
			"tool": name, "price_usd": strings.TrimPrefix(fees.USD(pt.offer.Amount), "$"),
			"amount": fmt.Sprint(pt.offer.Amount), "free_trial": pt.route.Trial, "resource": pt.offer.URL,
			"http_equivalent": h.baseURL + pt.route.Path,
		})
	}
	tools = append(tools, map[string]any{"tool": ToolServiceInfo, "price_usd": "0", "amount": "0", "free_trial": false})
	networks := []string{t.Network}
	if t.NetworkV1 != "" {
		networks = append(networks, t.NetworkV1)
	}
	return map[string]any{
		"tools": tools,
		"payment": map[string]any{
			"x402Version": []int{2, 1}, "scheme": "exact", "network": t.Network, "network_v1": t.NetworkV1,
			"networks": networks, "asset": t.Asset, "asset_name": t.AssetName, "decimals": 6, "payTo": t.PayTo,
			"maxTimeoutSeconds": t.MaxTimeoutSeconds,
			"payment_meta_key":  MetaPayment, "settlement_meta_key": MetaPaymentResponse,
			"note": "Confirm asset, network, payTo and amount before signing; a familiar token address on another chain is not equivalent.",
		},
		"free_trial": map[string]any{
			"calls_per_day": h.core.Trial().Limit(), "per": "client IP (IPv6: /64), UTC day",
			"tools": []string{ToolCheckPayee, ToolPreflight}, "shared_with": "the HTTP API's ?trial=1",
			"exhausted": "a payment-required result (error trial_exhausted); nothing is paid automatically",
		},
		"data_as_of": h.core.DataAsOf(),
	}
}

// serviceInfoBody is get_service_info's result.
func (h *Handler) serviceInfoBody() map[string]any {
	body := h.pricing()
	body["service"] = "payguard"
	body["version"] = core.ServiceVersion
	body["description"] = "Payee screening and spend preflight for agents that pay with x402. Read-only: payguard never signs, settles or holds the merchant payment under review."
	body["mcp_endpoint"] = h.baseURL + "/mcp"
	body["http_api"] = h.baseURL + "/openapi.json"
	body["receipt_keys"] = h.keysURL()
	body["sanctions"] = h.sanctionsState()
	body["data_as_of"] = h.core.DataAsOf()
	body["disclaimer"] = screening.Disclaimer
	return body
}

func (h *Handler) sanctionsState() map[string]any {
	state := map[string]any{"ready": h.core.SanctionsReady(), "data_as_of": h.core.DataAsOf(),
		"source": "OFAC SDN list and aliases"}
	if r := h.refreshHealth(); r != nil {
		state["refresh"] = r // as /health reports it; absent when the list is not refreshed
	}
	return state
}

// trust is what a caller needs to rely on a result: the receipt keys, how to verify, data freshness and
// what the screening is not.
func (h *Handler) trust() map[string]any {
	body := map[string]any{
		"receipt_keys_url": h.keysURL(),
		"receipt_verification": "Each preflight decision carries receipt.jws, an ES256 JWS over every returned decision field. " +
			"Verify it offline against the key set at receipt_keys_url, pinned separately: a key supplied by the sender " +
			"of a receipt proves nothing. Default maximum age one hour, 60 seconds of clock tolerance. Keep receipts private.",
		"sanctions": h.sanctionsState(),
		"data_handling": fmt.Sprintf("Arguments are not stored; the free-trial IP counter is deleted after %s; no receipt history is kept.",
			h.core.Trial().Retention()),
		"enforcement": "A model calling a screening tool does not enforce a decision; enforcement belongs in the payment path, before signing.",
		"disclaimer":  screening.Disclaimer,
		"data_as_of":  h.core.DataAsOf(),
	}
	if h.opt.JWKS != nil {
		if jwks, err := h.opt.JWKS(); err == nil && json.Valid(jwks) {
			body["receipt_keys"] = json.RawMessage(jwks)
		} else {
			body["receipt_keys_error"] = "the receipt keys are unavailable right now"
		}
	}
	return body
}

func (h *Handler) rules() map[string]any {
	return map[string]any{
		"rules": h.opt.Rules,
		"note": "Rules preflight_payment applies when its rules argument omits them; override any of them field by field " +
			"(snake_case names, as over HTTP).",
		"data_as_of": h.core.DataAsOf(),
	}
}

func (h *Handler) addResources() {
	for _, r := range []struct {
		uri, name, title, description string
		body                          func() map[string]any
	}{
		{ResourceRules, "default-rules", "Default spending rules",
			"The rules preflight_payment applies by default (caps, hold threshold, networks, USDC only, lists).", h.rules},
		{ResourcePricing, "pricing", "Prices and payment terms",
			"Price of each tool, the x402 terms of payguard's fees and the free-trial allowance.", h.pricing},
		{ResourceTrust, "trust", "Receipt keys, data freshness and disclaimer",
			"The public keys that verify decision receipts, sanctions-data freshness, data handling and the disclaimer.", h.trust},
	} {
		body := r.body
		h.mcp.AddResource(&sdk.Resource{URI: r.uri, Name: r.name, Title: r.title, Description: r.description,
			MIMEType: "application/json"},
			func(ctx context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
				text, err := json.Marshal(body())
				if err != nil {
					return nil, fmt.Errorf("resource could not be encoded")
				}
				return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: req.Params.URI, MIMEType: "application/json", Text: string(text)}}}, nil
			})
	}
}

func (h *Handler) addPrompts() {
	h.mcp.AddPrompt(&sdk.Prompt{
		Name:  PromptPreflight,
		Title: "Preflight a payment before paying",
		Description: "Before paying an x402 402 challenge (or a checkout), have payguard decide allow, hold or block, " +
			"and act on the decision.",
		Arguments: []*sdk.PromptArgument{
			{Name: "challenge", Title: "402 challenge", Required: true,
				Description: "The seller's x402 PaymentRequired JSON (v1 body or decoded v2 PAYMENT-REQUIRED header), or a cart JSON {merchant_domain, total_usd, pay_to, merchant_name}"},
			{Name: "rules", Title: "Spending rules",
				Description: "Optional JSON object of rules overriding the defaults, e.g. {\"max_per_payment_usd\": 0.5}"},
			{Name: "spent_today_usd", Title: "Spent today (USD)",
				Description: "Optional: what you already spent today by your own ledger, e.g. 3.20"},
		},
	}, h.preflightPrompt)
	h.mcp.AddPrompt(&sdk.Prompt{
		Name:        PromptCheckMerchant,
		Title:       "Check a merchant or payee",
		Description: "Screen a merchant's domain, legal name or wallet before dealing with it, and explain the result.",
		Arguments: []*sdk.PromptArgument{
			{Name: "domain", Title: "Domain", Description: "Merchant domain or URL, e.g. shop.example.com"},
			{Name: "name", Title: "Legal name", Description: "Merchant or payee legal name"},
			{Name: "wallet", Title: "Wallet", Description: "Payee wallet address, e.g. 0x..."},
		},
	}, h.checkMerchantPrompt)
}

func userText(text string) *sdk.PromptMessage {
	return &sdk.PromptMessage{Role: "user", Content: &sdk.TextContent{Text: text}}
}

func (h *Handler) preflightPrompt(ctx context.Context, req *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
	args := req.Params.Arguments
	challenge := strings.TrimSpace(args["challenge"])
	if challenge == "" {
		return nil, fmt.Errorf("argument challenge is required: the seller's x402 PaymentRequired JSON or a cart JSON")
	}
	member := "challenge"
	var probe map[string]any
	if json.Unmarshal([]byte(challenge), &probe) == nil {
		if _, isCart := probe["total_usd"]; isCart {
			member = "cart"
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "I am about to pay for something. Before any payment is signed, call the payguard tool %s with "+
		"these arguments:\n- %s: %s\n", ToolPreflight, member, challenge)
	if r := strings.TrimSpace(args["rules"]); r != "" {
		fmt.Fprintf(&b, "- rules: %s\n", r)
	}
	if s := strings.TrimSpace(args["spent_today_usd"]); s != "" {
		fmt.Fprintf(&b, "- context: {\"spent_today_usd\": %s}\n", s)
	}
	fmt.Fprintf(&b, "\nThen act on the decision:\n"+
		"- allow: payment may proceed, within my own policy, and only with the returned chosen_option (its network, asset, amount and payTo).\n"+
		"- hold: do NOT pay. Show me the reasons and ask me (or the responsible person) to approve or refuse.\n"+
		"- block: do NOT pay, and do not look for a way around it. Show me the reasons.\n"+
		"- a tool error, a payment-required result you are not allowed to pay, or any other answer: screening is unavailable; treat it as hold, never as allow.\n"+
		"Show every reason as returned (they are not a closed list), state data_as_of, and tell me receipt.id so I can keep it. "+
		"The receipt can be verified against the keys at %s. This is informational screening, not legal advice.", h.keysURL())
	return &sdk.GetPromptResult{Description: "Preflight a payment with payguard and act on allow, hold or block.",
		Messages: []*sdk.PromptMessage{userText(b.String())}}, nil
}

func (h *Handler) checkMerchantPrompt(ctx context.Context, req *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
	args := req.Params.Arguments
	var given []string
	for _, k := range []string{"domain", "name", "wallet"} {
		if v := strings.TrimSpace(args[k]); v != "" {
			given = append(given, fmt.Sprintf("- %s: %s", k, v))
		}
	}
	if len(given) == 0 {
		return nil, fmt.Errorf("give at least one of domain, name or wallet")
	}
	text := fmt.Sprintf("Check this merchant before I deal with it: call the payguard tool %s with\n%s\n\n"+
		"Then explain the result plainly:\n"+
		"- risk: high means do not pay without a human review; medium means look closer; unknown means something could not be checked and is NOT the same as low; low means nothing was flagged and everything asked about was known.\n"+
		"- each flag and what it means (sanctioned_address: exact wallet match on the OFAC SDN list; sanctioned_name_exact / sanctioned_name_possible: name matches, which are not proof of identity and must be verified; new_domain, domain_age_unknown, domain_no_dns, invalid_domain: domain signals; unrecognized_address: the address is no wallet address payguard recognizes, so risk is unknown, not low).\n"+
		"- the data_as_of date of the sanctions data.\n"+
		"A tool error means the check is unavailable: say so and do not treat the merchant as cleared. "+
		"This is informational screening, not legal advice.", ToolCheckPayee, strings.Join(given, "\n"))
	return &sdk.GetPromptResult{Description: "Screen a merchant with payguard's check_payee and explain the result.",
		Messages: []*sdk.PromptMessage{userText(text)}}, nil
}
