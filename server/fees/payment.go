package fees

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/payguard/payguard/x402"
)

// Header names on the wire.
const (
	HeaderPaymentRequired  = "PAYMENT-REQUIRED"
	HeaderPaymentSignature = "PAYMENT-SIGNATURE"
	HeaderPaymentResponse  = "PAYMENT-RESPONSE"
	HeaderXPayment         = "X-PAYMENT"
	HeaderXPaymentResponse = "X-PAYMENT-RESPONSE"
)

// maxPaymentBytes bounds a decoded payment payload. The SDK's largest (a v2 payload echoing offer-receipt
// and bazaar extensions) is about 3.6 KB.
const maxPaymentBytes = 32 << 10

// Payment is a paying client's PaymentPayload, as presented on one channel.
type Payment struct {
	// Version is the x402 version the payload declares (1 or 2).
	Version int
	// Raw is the payload JSON exactly as the client sent it; it is forwarded to the facilitator verbatim.
	Raw json.RawMessage

	parsed *x402.PaymentPayload
}

// PaymentError is a payment that cannot be accepted: the caller answers 402 with a fresh challenge whose
// error is Reason (the facilitator's invalidReason, or the seller's own reason).
type PaymentError struct {
	Reason  string
	Message string
}

func (e *PaymentError) Error() string {
	if e.Message == "" {
		return "fees: payment rejected: " + e.Reason
	}
	return "fees: payment rejected: " + e.Reason + ": " + e.Message
}

// PaymentFromRequest reads PAYMENT-SIGNATURE (v2) or X-PAYMENT (v1). It returns nil, nil when the request
// carries no payment, and a *PaymentError for a header that cannot be read.
func PaymentFromRequest(r *http.Request) (*Payment, error) {
	v2 := r.Header.Get(HeaderPaymentSignature)
	v1 := r.Header.Get(HeaderXPayment)
	switch {
	case v2 == "" && v1 == "":
		return nil, nil
	case v2 != "" && v1 != "":
		return nil, &PaymentError{Reason: "invalid_payload", Message: "send PAYMENT-SIGNATURE or X-PAYMENT, not both"}
	case v2 != "":
		return decodePaymentHeader(v2, 2)
	default:
		return decodePaymentHeader(v1, 1)
	}
}

func decodePaymentHeader(value string, headerVersion int) (*Payment, error) {
	value = strings.TrimSpace(value)
	if len(value) > base64.StdEncoding.EncodedLen(maxPaymentBytes) {
		return nil, &PaymentError{Reason: "invalid_payload", Message: "payment header too large"}
	}
	raw, err := base64.StdEncoding.Strict().DecodeString(value)
	if err != nil {
		return nil, &PaymentError{Reason: "invalid_payload", Message: "payment header is not standard base64"}
	}
	p, err := PaymentFromJSON(raw)
	if err != nil {
		return nil, err
	}
	if p.Version != headerVersion {
		return nil, &PaymentError{Reason: "invalid_x402_version",
			Message: fmt.Sprintf("x402Version %d payload in a v%d header", p.Version, headerVersion)}
	}
	return p, nil
}

// PaymentFromJSON reads a PaymentPayload object (MCP carries it as plain JSON in _meta["x402/payment"])
// with x402's strict decoder: exact member names, bounded, valid UTF-8, one JSON value.
func PaymentFromJSON(raw []byte) (*Payment, error) {
	if len(raw) > maxPaymentBytes {
		return nil, &PaymentError{Reason: "invalid_payload", Message: "payment payload too large"}
	}
	parsed, err := x402.ParsePaymentPayload(raw)
	if err != nil {
		var probe struct {
			Version json.RawMessage `json:"x402Version"`
		}
		if json.Unmarshal(raw, &probe) == nil && len(probe.Version) > 0 && string(probe.Version) != "1" && string(probe.Version) != "2" {
			return nil, &PaymentError{Reason: "invalid_x402_version", Message: "x402Version " + string(probe.Version)}
		}
		return nil, &PaymentError{Reason: "invalid_payload", Message: err.Error()}
	}
	if parsed.X402Version != 1 && parsed.X402Version != 2 {
		return nil, &PaymentError{Reason: "invalid_x402_version", Message: fmt.Sprintf("x402Version %d", parsed.X402Version)}
	}
	return &Payment{Version: parsed.X402Version, Raw: json.RawMessage(bytes.Clone(raw)), parsed: parsed}, nil
}

// authorization is the EIP-3009 part of an exact EVM payload, for the nonce guard.
type authorization struct {
	Authorization *struct {
		From  string `json:"from"`
		Nonce string `json:"nonce"`
	} `json:"authorization"`
}

// NonceKey identifies the payment for the never-settle-twice guard: network, payer and EIP-3009 nonce
// (lower case), or a digest of the payload when it has no EIP-3009 authorization.
func (p *Payment) NonceKey(network string) string {
	var a authorization
	if json.Unmarshal(p.parsed.Payload, &a) == nil && a.Authorization != nil && a.Authorization.Nonce != "" {
		return "x402-nonce:" + strings.ToLower(network+"|"+a.Authorization.From+"|"+a.Authorization.Nonce)
	}
	sum := sha256.Sum256(p.parsed.Payload)
	return "x402-payload:" + hex.EncodeToString(sum[:])
}

// Nonce is the EIP-3009 authorization nonce, or "" when the payload has none.
func (p *Payment) Nonce() string {
	var a authorization
	if json.Unmarshal(p.parsed.Payload, &a) == nil && a.Authorization != nil {
		return a.Authorization.Nonce
	}
	return ""
}

// ResponseHeader is the settlement header name for this payment's version.
func (p *Payment) ResponseHeader() string {
	if p.Version == 1 {
		return HeaderXPaymentResponse
	}
	return HeaderPaymentResponse
}

func base64Std(b []byte) string { return base64.StdEncoding.EncodeToString(b) }
