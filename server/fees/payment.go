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
	"github.com/payguard/payguard/x402/jsonscan"
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

// NonceKey identifies the payment for the never-settle-twice guard: network, payer and nonce (lower case)
// of its EIP-3009 or Permit2 authorization, read with exact member names as the facilitator reads them (so a
// decoy "Nonce" member does not make a new key), or a digest of the payload when it has neither.
func (p *Payment) NonceKey(network string) string {
	if from, nonce, kind := p.authorizationID(); nonce != "" {
		return "x402-" + kind + ":" + strings.ToLower(network+"|"+from+"|"+nonce)
	}
	sum := sha256.Sum256(p.parsed.Payload)
	return "x402-payload:" + hex.EncodeToString(sum[:])
}

// Nonce is the authorization nonce (EIP-3009 or Permit2), or "" when the payload has none.
func (p *Payment) Nonce() string {
	_, nonce, _ := p.authorizationID()
	return nonce
}

// authorizationID reads the payer and nonce of the payload's authorization by exact member names, the last
// of repeated names winning, as the facilitator's JSON parser reads them; nothing else in the payload has to
// be valid, so no change elsewhere in it makes a new key. kind is "nonce" for EIP-3009 (the key's historical
// name) and "permit2" for Permit2.
func (p *Payment) authorizationID() (from, nonce, kind string) {
	for _, k := range []struct{ member, kind string }{{"authorization", "nonce"}, {"permit2Authorization", "permit2"}} {
		auth, ok := exactMember(p.parsed.Payload, k.member)
		if !ok {
			continue
		}
		from, _ = exactString(auth, "from")
		if nonce, _ = exactString(auth, "nonce"); nonce != "" {
			return from, nonce, k.kind
		}
	}
	return "", "", ""
}

// exactMember is the value of the last member of a JSON object named exactly name.
func exactMember(obj []byte, name string) (value []byte, ok bool) {
	ms, valid := jsonscan.Object(obj)
	if !valid {
		return nil, false
	}
	for _, m := range ms {
		if m.Name == name {
			value, ok = m.Value, true
		}
	}
	return value, ok
}

// exactString is a member's string value; a number (a Permit2 nonce may be one) is its JSON text.
func exactString(obj []byte, name string) (string, bool) {
	raw, ok := exactMember(obj, name)
	if !ok {
		return "", false
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return "", false
	}
	switch v := v.(type) {
	case string:
		return v, true
	case float64:
		return strings.TrimSpace(string(raw)), true
	}
	return "", false
}

// ResponseHeader is the settlement header name for this payment's version.
func (p *Payment) ResponseHeader() string {
	if p.Version == 1 {
		return HeaderXPaymentResponse
	}
	return HeaderPaymentResponse
}

func base64Std(b []byte) string { return base64.StdEncoding.EncodeToString(b) }
