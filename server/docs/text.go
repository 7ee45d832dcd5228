package docs

import (
	"fmt"
	"strings"
	"time"
)

func (i Info) priceLines() string {
	var b strings.Builder
	for _, p := range i.Paid {
		trial := ""
		if p.Trial {
			trial = ", free trial with ?trial=1"
		}
		fmt.Fprintf(&b, "- %s %s — %s (%d atomic units)%s: %s\n", p.Method, i.url(p.Path), p.USD, p.Amount, trial, p.Description)
	}
	return b.String()
}

// LLMsTxt is /llms.txt: a plain summary for agents.
func LLMsTxt(i Info) string {
	return fmt.Sprintf(`# payguard

> Payee screening and spend preflight for AI agents that pay with x402. Call it before you pay a merchant
> or a wallet. Informational screening only: not legal advice, not a compliance certification.

## Paid operations (x402, USDC on %s, asset %s, payTo %s)
%s
Pay with any x402 client: the 402 carries the v2 PAYMENT-REQUIRED header and the v1 JSON body. Send
PAYMENT-SIGNATURE (v2) or X-PAYMENT (v1); the 200 carries PAYMENT-RESPONSE or X-PAYMENT-RESPONSE.
Free trial: add ?trial=1 to /v1/check or /v1/preflight, %d calls per IP per UTC day (shared with MCP).
An exhausted trial answers 402 and never pays by itself.

## How to use it
1. You receive a 402 from a seller.
2. POST that 402 body (as "challenge") to %s with your rules.
3. Pay only on "allow". Route "hold" to a human. Never pay on "block".
4. Keep receipt.id; verify the receipt JWS with the keys at %s (pin them).
A non-2xx or malformed answer means screening is unavailable: treat it as hold, never as allow.

## MCP
Remote MCP server at %s (stateless Streamable HTTP, JSON-RPC 2.0; protocol %s). Tools: check_payee,
preflight_payment (free trial first, then x402), check_endpoint (x402), get_service_info (free). A paid tool
without payment returns an isError result with the x402 PaymentRequired in structuredContent; retry with the
PaymentPayload in params._meta["x402/payment"]; the settlement comes back in _meta["x402/payment-response"].
Resources: payguard://rules/default, payguard://pricing, payguard://trust. Prompts: preflight-before-paying,
check-a-merchant.

## Free documents
- %s — OpenAPI 3.1 description
- %s — example check response
- %s — default rules
- %s — health and sanctions-data freshness
- %s — payment discovery
- %s — MCP (streamable HTTP) discovery; MCP endpoint %s
- %s — A2A agent card
- %s, %s

Every response states data_as_of: the time of the sanctions data used.
`, i.Network, i.Asset, i.PayTo, i.priceLines(), i.TrialLimit, i.url("/v1/preflight"),
		i.url("/.well-known/payguard-keys.json"), i.url("/mcp"), strings.Join(MCPProtocolVersions, ", "),
		i.url("/openapi.json"), i.url("/v1/sample"), i.url("/v1/rules/default"), i.url("/health"),
		i.url("/.well-known/x402"), i.url("/.well-known/mcp.json"), i.url("/mcp"), i.url("/.well-known/agent-card.json"),
		i.url("/terms"), i.url("/privacy"))
}

// Terms is /terms.
func Terms(i Info) string {
	return fmt.Sprintf(`payguard terms of service (service version %s)

1. What you get. payguard screens payees and decides spend preflights for software agents. Results are
   informational screening only. They are not legal advice, not a compliance certification and not a
   guarantee. Sanctions data is as of the data_as_of value in every response; verify a match before acting.
2. Prices. Each paid call costs the price stated in its 402 challenge and in %s:
%s   Payment is USDC on %s to %s, verified and settled through an x402 facilitator. The exact
   atomic amount, network, asset and payee are in the challenge; confirm them before signing.
3. When you are charged. Only a delivered result is charged. A hold or block decision is a delivered
   result. Invalid requests (4xx) and unavailable data (503) are never settled. When the facilitator gives
   no usable answer to a settlement (settlement_outcome_unknown, HTTP %d), the transfer may have happened:
   check your authorization nonce on chain. payguard never retries such a settlement and promises no
   automatic refund.
4. Free trial. ?trial=1 gives %d calls per IP address per UTC day, shared with MCP.
5. Read-only. payguard never signs, settles or holds the merchant payment under review. Your own client
   signs every payment you make.
6. Availability. The service is provided as is, without warranty. Do not treat an error or a missing
   answer as permission to pay.
7. Contact: %s
`, i.Version, i.url("/.well-known/x402"), i.priceLines(), i.Network, i.PayTo, i.SettlementUnknownStatus,
		i.TrialLimit, i.Contact)
}

// Privacy is /privacy.
func Privacy(i Info) string {
	return fmt.Sprintf(`payguard privacy notice

- Request bodies (preflight inputs, challenges, carts) and query parameters of checks (names, wallets,
  domains) are not logged. They are stored only inside the result of a paid call, kept one hour so that a
  retry of the same payment gets the result it paid for, then deleted.
- No receipt history is kept. Signed receipts are returned to you; keep them private, since a JWS is readable.
- Free trial: a counter per client IP address (IPv6 per /64) and UTC day is kept for %s, then deleted.
- Logs hold one line per request: method, path, status, size, latency, and for preflights the decision and
  receipt id. No bodies, no query strings, no IP addresses.
- Payments are verified and settled through the x402 facilitator at %s, which sees the payment
  authorization you signed (payer, amount, nonce). Settled payments are public on %s.
- payguard does not sell or share data. Contact: %s
`, i.TrialRetention, i.FacilitatorURL, i.Network, i.Contact)
}

// SecurityTxt is /.well-known/security.txt (RFC 9116). Expires is 180 days ahead of now, regenerated on
// every request, so it never lapses on a running service.
func SecurityTxt(i Info, now time.Time) string {
	return fmt.Sprintf(`Contact: %s
Expires: %s
Preferred-Languages: en
Canonical: %s
Policy: %s
`, i.Contact, now.UTC().Add(180*24*time.Hour).Truncate(time.Second).Format(time.RFC3339),
		i.url("/.well-known/security.txt"), i.url("/terms"))
}
