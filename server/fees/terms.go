// Package fees is payguard's x402 seller side: the payment terms of the service's own fees, the 402
// challenge (v2 PAYMENT-REQUIRED header and v1 JSON body together), the paying retry (PAYMENT-SIGNATURE or
// X-PAYMENT), a facilitator client (/verify, /settle, /supported), the offer-receipt extension, and the
// Charge flow every channel uses: requirements for a price → verify the payment → do the work → settle.
//
// The flow is channel neutral: the HTTP API reads the payment from headers, MCP from a tool call's _meta;
// both call Seller.Begin and Charge.Settle.
package fees

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// Terms are the deployment's fixed payment terms: one network, one asset, one wallet.
type Terms struct {
	Network           string // CAIP-2, e.g. "eip155:8453"
	NetworkV1         string // the v1 name of Network, e.g. "base"; empty when v1 has no name for it
	Asset             string // token contract address
	AssetName         string // EIP-712 domain name (extra.name)
	AssetVersion      string // EIP-712 domain version (extra.version)
	PayTo             string // the service's public wallet
	MaxTimeoutSeconds int64
}

// Validate reports terms that cannot make a payable challenge.
func (t Terms) Validate() error {
	switch {
	case !strings.HasPrefix(t.Network, "eip155:"):
		return fmt.Errorf("fees: network %q is not an EVM CAIP-2 id", t.Network)
	case t.Asset == "":
		return fmt.Errorf("fees: no asset for network %s", t.Network)
	case t.AssetName == "" || t.AssetVersion == "":
		return fmt.Errorf("fees: the asset's EIP-712 name and version are required (extra.name/version)")
	case t.PayTo == "":
		return fmt.Errorf("fees: pay_to (the service's wallet) is required")
	case t.MaxTimeoutSeconds <= 0:
		return fmt.Errorf("fees: maxTimeoutSeconds must be positive")
	}
	return nil
}

// Offer describes one paid resource and its price.
type Offer struct {
	URL          string          // absolute resource URL (base_url + path)
	Method       string          // HTTP method, for v1 outputSchema discovery metadata
	Description  string          // what the caller pays for
	MimeType     string          // of the paid response
	Amount       uint64          // atomic units of the asset (USDC: 10000 = $0.01)
	OutputSchema json.RawMessage // optional v1 outputSchema; a minimal {input:{type:"http",method}} otherwise
	// Bazaar is the optional x402 bazaar (discovery) extension object {info, schema} for the v2 challenge.
	Bazaar json.RawMessage
	// OfferReceipt adds the x402 offer-receipt extension: signed offers in the 402 and a signed delivery
	// receipt in the settlement response.
	OfferReceipt bool
}

// USD formats an atomic USDC amount (6 decimals) as dollars, e.g. 10000 → "$0.01", 5000 → "$0.005".
func USD(atomic uint64) string {
	whole := atomic / 1_000_000
	frac := strconv.FormatUint(atomic%1_000_000+1_000_000, 10)[1:]
	frac = strings.TrimRight(frac, "0")
	if len(frac) < 2 {
		frac += strings.Repeat("0", 2-len(frac))
	}
	return "$" + strconv.FormatUint(whole, 10) + "." + frac
}

// requirement is one accepts[] entry as this seller writes it. Field order follows the SDK sellers.
type requirementV2 struct {
	Scheme            string     `json:"scheme"`
	Network           string     `json:"network"`
	Amount            string     `json:"amount"`
	Asset             string     `json:"asset"`
	PayTo             string     `json:"payTo"`
	MaxTimeoutSeconds int64      `json:"maxTimeoutSeconds"`
	Extra             assetExtra `json:"extra"`
}

type requirementV1 struct {
	Scheme            string          `json:"scheme"`
	Network           string          `json:"network"`
	MaxAmountRequired string          `json:"maxAmountRequired"`
	Resource          string          `json:"resource"`
	Description       string          `json:"description"`
	MimeType          string          `json:"mimeType"`
	PayTo             string          `json:"payTo"`
	MaxTimeoutSeconds int64           `json:"maxTimeoutSeconds"`
	Asset             string          `json:"asset"`
	OutputSchema      json.RawMessage `json:"outputSchema,omitempty"`
	Extra             assetExtra      `json:"extra"`
}

type assetExtra struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

func (t Terms) requirementV2(o Offer) requirementV2 {
	return requirementV2{
		Scheme:            "exact",
		Network:           t.Network,
		Amount:            strconv.FormatUint(o.Amount, 10),
		Asset:             t.Asset,
		PayTo:             t.PayTo,
		MaxTimeoutSeconds: t.MaxTimeoutSeconds,
		Extra:             assetExtra{Name: t.AssetName, Version: t.AssetVersion},
	}
}

func (t Terms) requirementV1(o Offer) requirementV1 {
	schema := o.OutputSchema
	if len(schema) == 0 {
		schema, _ = json.Marshal(map[string]any{
			"input": map[string]any{"type": "http", "method": o.Method, "discoverable": true},
		})
	}
	return requirementV1{
		Scheme:            "exact",
		Network:           t.NetworkV1,
		MaxAmountRequired: strconv.FormatUint(o.Amount, 10),
		Resource:          o.URL,
		Description:       o.Description,
		MimeType:          o.MimeType,
		PayTo:             t.PayTo,
		MaxTimeoutSeconds: t.MaxTimeoutSeconds,
		Asset:             t.Asset,
		OutputSchema:      schema,
		Extra:             assetExtra{Name: t.AssetName, Version: t.AssetVersion},
	}
}
