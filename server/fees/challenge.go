package fees

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
)

// ExtensionBazaar is the x402 discovery extension key.
const ExtensionBazaar = "bazaar"

// Challenge is one 402 answer in both protocol generations: the v2 object sent base64 in the
// PAYMENT-REQUIRED header (read by @x402/fetch) and the v1 object sent as the JSON body (read by x402-fetch).
type Challenge struct {
	V2 *PaymentRequiredV2
	V1 *PaymentRequiredV1
}

// PaymentRequiredV2 is the v2 PAYMENT-REQUIRED object.
type PaymentRequiredV2 struct {
	X402Version int                        `json:"x402Version"`
	Error       string                     `json:"error,omitempty"`
	Resource    resourceV2                 `json:"resource"`
	Accepts     []requirementV2            `json:"accepts"`
	Extensions  map[string]json.RawMessage `json:"extensions,omitempty"`
}

type resourceV2 struct {
	URL         string `json:"url"`
	Description string `json:"description,omitempty"`
	MimeType    string `json:"mimeType,omitempty"`
}

// PaymentRequiredV1 is the v1 JSON body (PaymentRequirementsResponse). payguard adds data_as_of, which
// every response of the service states; x402 clients ignore members they do not know.
type PaymentRequiredV1 struct {
	X402Version int             `json:"x402Version"`
	Error       string          `json:"error"`
	Accepts     []requirementV1 `json:"accepts"`
	// Trial explains an exhausted free trial (absent on other challenges).
	Trial    *TrialNotice `json:"trial,omitempty"`
	DataAsOf string       `json:"data_as_of"`
}

// TrialNotice is added to the 402 body when ?trial=1 was asked for and the day's quota is used.
type TrialNotice struct {
	Exhausted bool   `json:"exhausted"`
	Limit     int    `json:"limit"`
	Used      int    `json:"used"`
	ResetsAt  string `json:"resets_at"` // next 00:00 UTC
	Message   string `json:"message"`
}

// HeaderValue is the PAYMENT-REQUIRED header value: standard base64 (with padding) of the v2 JSON.
func (c *Challenge) HeaderValue() (string, error) {
	b, err := json.Marshal(c.V2)
	if err != nil {
		return "", fmt.Errorf("fees: encode PAYMENT-REQUIRED: %w", err)
	}
	return base64.StdEncoding.EncodeToString(b), nil
}

// Challenge builds the 402 for an offer. reason becomes the challenge's error text (both versions). With
// Offer.OfferReceipt the v2 object carries signed offers; a signing failure is receipts.ErrSigningUnavailable
// (the caller answers 503 receipt_signing_unavailable rather than an unsigned offer).
func (s *Seller) Challenge(o Offer, reason string) (*Challenge, error) {
	if reason == "" {
		reason = "Payment required"
	}
	v2 := &PaymentRequiredV2{
		X402Version: 2,
		Error:       reason,
		Resource:    resourceV2{URL: o.URL, Description: o.Description, MimeType: o.MimeType},
		Accepts:     []requirementV2{s.terms.requirementV2(o)},
	}
	if o.OfferReceipt || len(o.Bazaar) > 0 {
		v2.Extensions = map[string]json.RawMessage{}
	}
	if len(o.Bazaar) > 0 {
		v2.Extensions[ExtensionBazaar] = o.Bazaar
	}
	if o.OfferReceipt {
		ext, err := s.signOffers(o, v2.Accepts)
		if err != nil {
			return nil, err
		}
		v2.Extensions[ExtensionOfferReceipt] = ext
	}
	v1 := &PaymentRequiredV1{X402Version: 1, Error: reason, Accepts: []requirementV1{}}
	if s.terms.NetworkV1 != "" {
		v1.Accepts = append(v1.Accepts, s.terms.requirementV1(o))
	}
	return &Challenge{V2: v2, V1: v1}, nil
}
