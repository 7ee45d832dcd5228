package x402

import (
	"bytes"
	"errors"
)

// DecodePaymentPayloadHeader reads a paying retry's header value: X-PAYMENT (v1) or PAYMENT-SIGNATURE
// (v2), standard base64 of JSON. x402Version must be 1 or 2 and `payload` an object; a v1 payload must
// name its scheme and network, and a v2 payload must carry `accepted`.
func DecodePaymentPayloadHeader(value string) (*PaymentPayload, error) {
	doc, err := decodeHeader(value)
	if err != nil {
		return nil, err
	}
	p, err := decodePaymentPayload(doc)
	if err != nil {
		return nil, err
	}
	if err := p.validate(); err != nil {
		return nil, err
	}
	return p, nil
}

// ParsePaymentPayload reads a payment payload carried as plain JSON (MCP's `_meta["x402/payment"]`, a
// facilitator body) with the same limits and checks as DecodePaymentPayloadHeader.
func ParsePaymentPayload(data []byte) (*PaymentPayload, error) {
	data, err := ownDocument(data)
	if err != nil {
		return nil, err
	}
	p, err := decodePaymentPayload(data)
	if err != nil {
		return nil, err
	}
	if err := p.validate(); err != nil {
		return nil, err
	}
	return p, nil
}

func (p *PaymentPayload) validate() error {
	if t := bytes.TrimSpace(p.Payload); len(t) == 0 || t[0] != '{' {
		return malformed("payment payload: `payload` must be an object")
	}
	switch p.X402Version {
	case V1:
		if p.Scheme == "" || p.Network == "" {
			return malformed("payment payload: v1 needs scheme and network")
		}
	case V2:
		if p.Accepted == nil {
			return malformed("payment payload: v2 needs `accepted`")
		}
	}
	return nil
}

func decodePaymentPayload(data []byte) (*PaymentPayload, error) {
	const what = "payment payload"
	m, err := members(data, what)
	if err != nil {
		return nil, err
	}
	p := &PaymentPayload{}
	if err := decodeVersion(&m, what, &p.X402Version); err != nil {
		return nil, err
	}
	if p.X402Version == V1 {
		if err := m.str("scheme", what, &p.Scheme); err != nil {
			return nil, err
		}
		if err := m.str("network", what, &p.Network); err != nil {
			return nil, err
		}
	} else {
		raw, err := m.object("resource", what)
		if err != nil {
			return nil, err
		}
		if raw != nil {
			if p.Resource, err = decodeResourceInfo(raw); err != nil {
				return nil, err
			}
		}
		if raw, err = m.object("accepted", what); err != nil {
			return nil, err
		}
		if raw != nil {
			if p.Accepted, err = decodeRequirement(raw, V2); err != nil {
				return nil, err
			}
		}
	}
	p.Payload = m.raw("payload")
	if p.Extensions, err = m.rawMap("extensions", what); err != nil {
		return nil, err
	}
	p.Unknown = m.rest()
	return p, nil
}

// MarshalJSON writes the payload in the member order of the SDKs, then every Unknown member verbatim.
func (p PaymentPayload) MarshalJSON() ([]byte, error) {
	w := newObjectWriter()
	w.value("x402Version", p.X402Version)
	if p.Scheme != "" {
		w.str("scheme", p.Scheme)
	}
	if p.Network != "" {
		w.str("network", p.Network)
	}
	if len(p.Payload) > 0 {
		w.raw("payload", p.Payload)
	}
	if p.Extensions != nil {
		w.rawMap("extensions", p.Extensions)
	}
	if p.Resource != nil {
		w.value("resource", p.Resource)
	}
	if p.Accepted != nil {
		version := p.X402Version
		if version != V1 {
			version = V2
		}
		b, err := encodeRequirement(p.Accepted, version)
		if err != nil {
			return nil, err
		}
		w.raw("accepted", b)
	}
	w.unknown(p.Unknown)
	return w.finish()
}

// UnmarshalJSON reads a payment payload (as in a facilitator request body), matching member names
// exactly. It requires x402Version 1 or 2 but not the header checks of DecodePaymentPayloadHeader.
func (p *PaymentPayload) UnmarshalJSON(data []byte) error {
	data, err := ownDocument(data)
	if err != nil {
		return err
	}
	d, err := decodePaymentPayload(data)
	if err != nil {
		return err
	}
	*p = *d
	return nil
}

// ErrNotExactEVM is returned by EVM (and ExactEVM) when the payload does not hold an EVM authorization.
var ErrNotExactEVM = errors.New("x402: not an EVM exact or upto payload")

// EVM reads Payload as an EVM payload of the `exact` or `upto` scheme: a signature plus an EIP-3009
// `authorization` (exact) or a Permit2 `permit2Authorization` (exact's Permit2 variant; upto's only form).
// Member names are matched exactly (a JavaScript facilitator reads `to`, so `To` must not count as `to`),
// and every authorization field must be a non-empty string (witness.facilitator may be absent).
func (p *PaymentPayload) EVM() (*EVMPayload, error) {
	if p == nil || len(p.Payload) == 0 {
		return nil, ErrNotExactEVM
	}
	const what = "payload"
	m, err := members(bytes.Clone(p.Payload), what) // p.Payload may be the caller's own bytes
	if err != nil {
		return nil, errors.Join(ErrNotExactEVM, err)
	}
	out := &EVMPayload{}
	if err := m.str("signature", what, &out.Signature); err != nil {
		return nil, errors.Join(ErrNotExactEVM, err)
	}
	if out.Signature == "" {
		return nil, errors.Join(ErrNotExactEVM, malformed("payload: no signature"))
	}
	auth, err := m.object("authorization", what)
	if err != nil {
		return nil, errors.Join(ErrNotExactEVM, err)
	}
	if auth != nil {
		if out.Authorization, err = decodeAuthorization(auth); err != nil {
			return nil, errors.Join(ErrNotExactEVM, err)
		}
	}
	permit2, err := m.object("permit2Authorization", what)
	if err != nil {
		return nil, errors.Join(ErrNotExactEVM, err)
	}
	if permit2 != nil {
		if out.Permit2, err = decodePermit2(permit2); err != nil {
			return nil, errors.Join(ErrNotExactEVM, err)
		}
	}
	if out.Authorization == nil && out.Permit2 == nil {
		return nil, errors.Join(ErrNotExactEVM, malformed("payload: neither authorization nor permit2Authorization"))
	}
	return out, nil
}

// ExactEVM is EVM, kept for the callers that read exact payloads.
func (p *PaymentPayload) ExactEVM() (*EVMPayload, error) { return p.EVM() }

func decodeAuthorization(data []byte) (*EIP3009Authorization, error) {
	const what = "payload.authorization"
	m, err := members(data, what)
	if err != nil {
		return nil, err
	}
	a := &EIP3009Authorization{}
	for _, f := range []struct {
		key string
		dst *string
	}{
		{"from", &a.From}, {"to", &a.To}, {"value", &a.Value},
		{"validAfter", &a.ValidAfter}, {"validBefore", &a.ValidBefore}, {"nonce", &a.Nonce},
	} {
		if !m.has(f.key) {
			return nil, malformed("%s: no %s", what, f.key)
		}
		if err := m.str(f.key, what, f.dst); err != nil {
			return nil, err
		}
	}
	return a, nil
}

// ErrNotExactSVM is returned by ExactSVM when the payload does not hold an SVM "exact" transaction.
var ErrNotExactSVM = errors.New("x402: not an SVM exact payload")

// ExactSVM reads Payload as an SVM "exact" payload, `{"transaction": "<base64 wire transaction>"}`, and
// returns the transaction text (undecoded: package x402/svm reads it). The member name is matched exactly
// and must hold a non-empty string.
func (p *PaymentPayload) ExactSVM() (string, error) {
	if p == nil || len(p.Payload) == 0 {
		return "", ErrNotExactSVM
	}
	const what = "payload"
	m, err := members(bytes.Clone(p.Payload), what)
	if err != nil {
		return "", errors.Join(ErrNotExactSVM, err)
	}
	var tx string
	if err := m.str("transaction", what, &tx); err != nil {
		return "", errors.Join(ErrNotExactSVM, err)
	}
	if tx == "" {
		return "", errors.Join(ErrNotExactSVM, malformed("payload: no transaction"))
	}
	return tx, nil
}
