package fees

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"unicode/utf8"

	"github.com/payguard/payguard/receipts"
)

// ExtensionOfferReceipt is the x402 extension key of signed offers and receipts.
const ExtensionOfferReceipt = "offer-receipt"

// Signer makes a compact JWS (ES256, kid in the protected header) over a payload; receipts.KeySet
// implements it, and so does the preflight engine's signer.
type Signer interface {
	Sign(payload []byte) (jws string, err error)
}

// offerEntry is one signed offer in the JWS format: the payload lives inside the JWS.
type offerEntry struct {
	Format      string `json:"format"`
	AcceptIndex int    `json:"acceptIndex"`
	Signature   string `json:"signature"`
}

type signedReceipt struct {
	Format    string `json:"format"`
	Signature string `json:"signature"`
}

// Schemas of the extension's info objects (JSON Schema 2020-12), as the SDK publishes them; the JWS format
// carries no separate payload.
var (
	offersSchema = json.RawMessage(`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",` +
		`"properties":{"offers":{"type":"array","items":{"type":"object","properties":{"format":{"type":"string"},` +
		`"acceptIndex":{"type":"integer"},"payload":{"type":"object","properties":{"version":{"type":"integer"},` +
		`"resourceUrl":{"type":"string"},"scheme":{"type":"string"},"network":{"type":"string"},"asset":{"type":"string"},` +
		`"payTo":{"type":"string"},"amount":{"type":"string"},"validUntil":{"type":"integer"}},` +
		`"required":["version","resourceUrl","scheme","network","asset","payTo","amount"]},"signature":{"type":"string"}},` +
		`"required":["format","signature"]}}},"required":["offers"]}`)
	receiptSchema = json.RawMessage(`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",` +
		`"properties":{"receipt":{"type":"object","properties":{"format":{"type":"string"},"payload":{"type":"object",` +
		`"properties":{"version":{"type":"integer"},"network":{"type":"string"},"resourceUrl":{"type":"string"},` +
		`"payer":{"type":"string"},"issuedAt":{"type":"integer"},"transaction":{"type":"string"}},` +
		`"required":["version","network","resourceUrl","payer","issuedAt"]},"signature":{"type":"string"}},` +
		`"required":["format","signature"]}},"required":["receipt"]}`)
)

// signOffers signs one offer per accepts entry: {version:1, resourceUrl, scheme, network (CAIP-2), asset,
// payTo, amount, validUntil}, JCS-canonical, valid for maxTimeoutSeconds as the SDK does.
func (s *Seller) signOffers(o Offer, accepts []requirementV2) (json.RawMessage, error) {
	if s.signer == nil {
		return nil, fmt.Errorf("%w: no signing key configured", receipts.ErrSigningUnavailable)
	}
	offers := make([]offerEntry, 0, len(accepts))
	for i, a := range accepts {
		payload, err := canonicalJSON(map[string]any{
			"version":     1,
			"resourceUrl": o.URL,
			"scheme":      a.Scheme,
			"network":     a.Network,
			"asset":       a.Asset,
			"payTo":       a.PayTo,
			"amount":      a.Amount,
			"validUntil":  s.now().Unix() + a.MaxTimeoutSeconds,
		})
		if err != nil {
			return nil, err
		}
		jws, err := s.signer.Sign(payload)
		if err != nil {
			return nil, fmt.Errorf("%w: offer: %v", receipts.ErrSigningUnavailable, err)
		}
		offers = append(offers, offerEntry{Format: "jws", AcceptIndex: i, Signature: jws})
	}
	return json.Marshal(map[string]any{"info": map[string]any{"offers": offers}, "schema": offersSchema})
}

// signReceipt signs the delivery receipt {version:1, network, resourceUrl, payer, issuedAt, transaction}.
// It is signed before settlement so that a signing failure can still answer 503 with nothing settled;
// transaction is therefore "" (the SDK's privacy default).
func (s *Seller) signReceipt(o Offer, payer string) (json.RawMessage, error) {
	if s.signer == nil {
		return nil, fmt.Errorf("%w: no signing key configured", receipts.ErrSigningUnavailable)
	}
	payload, err := canonicalJSON(map[string]any{
		"version":     1,
		"network":     s.terms.Network,
		"resourceUrl": o.URL,
		"payer":       payer,
		"issuedAt":    s.now().Unix(),
		"transaction": "",
	})
	if err != nil {
		return nil, err
	}
	jws, err := s.signer.Sign(payload)
	if err != nil {
		return nil, fmt.Errorf("%w: receipt: %v", receipts.ErrSigningUnavailable, err)
	}
	return json.Marshal(map[string]any{
		"info":   map[string]any{"receipt": signedReceipt{Format: "jws", Signature: jws}},
		"schema": receiptSchema,
	})
}

// canonicalJSON writes a flat object of strings and integers in RFC 8785 (JCS) form: members sorted by
// key (UTF-16 order equals byte order for the ASCII keys used here), no whitespace, ECMAScript string
// escaping (only '"', '\\' and control characters are escaped).
func canonicalJSON(obj map[string]any) ([]byte, error) {
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		if err := jcsString(&b, k); err != nil {
			return nil, err
		}
		b.WriteByte(':')
		switch v := obj[k].(type) {
		case string:
			if err := jcsString(&b, v); err != nil {
				return nil, err
			}
		case int:
			b.WriteString(strconv.Itoa(v))
		case int64:
			// JCS numbers are IEEE doubles: integers beyond 2^53 would not round-trip.
			if v > 1<<53 || v < -(1<<53) {
				return nil, fmt.Errorf("fees: canonical JSON: integer %d out of range", v)
			}
			b.WriteString(strconv.FormatInt(v, 10))
		default:
			return nil, fmt.Errorf("fees: canonical JSON: unsupported value type %T for %q", v, k)
		}
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func jcsString(b *bytes.Buffer, s string) error {
	if !utf8.ValidString(s) {
		return fmt.Errorf("fees: canonical JSON: invalid UTF-8 in %q", s)
	}
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\f':
			b.WriteString(`\f`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20:
			fmt.Fprintf(b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return nil
}
