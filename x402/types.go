package x402

import "encoding/json"

// ResourceInfo is the v2 top-level `resource` object of a challenge and of a payment payload.
type ResourceInfo struct {
	URL         string `json:"url"`
	Description string `json:"description,omitempty"`
	MimeType    string `json:"mimeType,omitempty"`

	// Unknown holds every other member (serviceName, tags, iconUrl, ...) verbatim for re-encoding.
	Unknown map[string]json.RawMessage `json:"-"`
}

// Requirement is one entry of a challenge's `accepts` array, read the same way for v1 and v2.
//
// Amount is the atomic amount as a decimal string: v2 `amount`, v1 `maxAmountRequired`. Which JSON name it
// was read from is remembered (Version) so that re-encoding writes it back under the same name; inside a
// PaymentRequired the challenge's X402Version decides. Version 0 (a Requirement built in Go) encodes as v2.
//
// Member names are matched exactly (not case-insensitively as encoding/json would). Members this type does
// not model, and in a v2 entry the v1-only ones, are kept verbatim in Unknown.
type Requirement struct {
	Version           int             `json:"-"` // 1 or 2: the challenge version this entry was read from
	Scheme            string          `json:"scheme"`
	Network           string          `json:"network"` // as on the wire: a v1 name ("base") or CAIP-2 ("eip155:8453")
	Amount            string          `json:"-"`       // v2 "amount" / v1 "maxAmountRequired"
	Asset             string          `json:"asset"`
	PayTo             string          `json:"payTo"`
	MaxTimeoutSeconds int64           `json:"maxTimeoutSeconds"`
	Extra             json.RawMessage `json:"extra,omitempty"`

	// v1 only: per-requirement resource fields.
	Resource     string          `json:"resource,omitempty"`
	Description  string          `json:"description,omitempty"`
	MimeType     string          `json:"mimeType,omitempty"`
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`

	// Unknown holds every member not modelled above, verbatim, for lossless re-encoding.
	Unknown map[string]json.RawMessage `json:"-"`
}

// PaymentRequired is a 402 challenge: the v1 JSON body (PaymentRequirementsResponse) or the v2
// PAYMENT-REQUIRED header object.
type PaymentRequired struct {
	X402Version int                        `json:"x402Version"`
	Error       string                     `json:"error,omitempty"`
	Resource    *ResourceInfo              `json:"resource,omitempty"` // v2 only
	Accepts     []Requirement              `json:"accepts"`
	Extensions  map[string]json.RawMessage `json:"extensions,omitempty"` // v2 only

	// Unknown holds every other top-level member verbatim.
	Unknown map[string]json.RawMessage `json:"-"`
}

// PaymentPayload is the body of a paying retry (X-PAYMENT in v1, PAYMENT-SIGNATURE in v2).
type PaymentPayload struct {
	X402Version int `json:"x402Version"`

	// v1: the scheme and network are top-level; nothing echoes the requirement.
	Scheme  string `json:"scheme,omitempty"`
	Network string `json:"network,omitempty"`

	// v2: the resource and a verbatim copy of the chosen accepts[] entry.
	Resource *ResourceInfo `json:"resource,omitempty"`
	Accepted *Requirement  `json:"accepted,omitempty"`

	// Payload is scheme specific; for EVM "exact" and "upto" see EVMPayload.
	Payload    json.RawMessage            `json:"payload"`
	Extensions map[string]json.RawMessage `json:"extensions,omitempty"`

	Unknown map[string]json.RawMessage `json:"-"`
}

// EVMPayload is PaymentPayload.Payload for the EVM "exact" and "upto" schemes: a signature over an EIP-3009
// authorization (exact) or a Permit2 one (exact's Permit2 variant, upto). It is a read-only view (see
// PaymentPayload.EVM): the payload itself stays verbatim in Payload.
type EVMPayload struct {
	Signature     string
	Authorization *EIP3009Authorization
	Permit2       *Permit2Authorization
}

// ExactEVMPayload is the former name of EVMPayload.
type ExactEVMPayload = EVMPayload

// EIP3009Authorization is a TransferWithAuthorization message. All numbers are decimal strings.
type EIP3009Authorization struct {
	From        string `json:"from"`
	To          string `json:"to"`
	Value       string `json:"value"`
	ValidAfter  string `json:"validAfter"`
	ValidBefore string `json:"validBefore"`
	Nonce       string `json:"nonce"`
}

// SettleResponse is the settlement header's object (X-PAYMENT-RESPONSE / PAYMENT-RESPONSE) and the
// facilitator's /settle answer.
type SettleResponse struct {
	Success      bool                       `json:"success"`
	ErrorReason  string                     `json:"errorReason,omitempty"`
	ErrorMessage string                     `json:"errorMessage,omitempty"`
	Payer        string                     `json:"payer,omitempty"`
	Transaction  string                     `json:"transaction"`
	Network      string                     `json:"network"`
	Amount       string                     `json:"amount,omitempty"`
	Extensions   map[string]json.RawMessage `json:"extensions,omitempty"`

	// Unknown holds every other member (e.g. the SDK's `extra`) verbatim.
	Unknown map[string]json.RawMessage `json:"-"`
}

// VerifyResponse is the facilitator's /verify answer.
type VerifyResponse struct {
	IsValid        bool   `json:"isValid"`
	InvalidReason  string `json:"invalidReason,omitempty"`
	InvalidMessage string `json:"invalidMessage,omitempty"`
	Payer          string `json:"payer,omitempty"`

	// Unknown holds every other member verbatim.
	Unknown map[string]json.RawMessage `json:"-"`
}

// FacilitatorRequest is the body of POST /verify and POST /settle.
type FacilitatorRequest struct {
	X402Version         int             `json:"x402Version"`
	PaymentPayload      *PaymentPayload `json:"paymentPayload"`
	PaymentRequirements *Requirement    `json:"paymentRequirements"`

	// Unknown holds every other member verbatim.
	Unknown map[string]json.RawMessage `json:"-"`
}

// Asset is a known stablecoin contract on one network.
type Asset struct {
	Network  string // CAIP-2
	Address  string // as published (EIP-55 for EVM)
	Symbol   string // "USDC"
	Decimals int    // 6 for every USDC entry
	Name     string // EIP-712 domain name: "USD Coin" on Base mainnet, "USDC" on Base Sepolia
	Version  string // EIP-712 domain version: "2"
}
