package x402

import "strings"

// DecodeSettleResponseHeader reads a settlement header value: X-PAYMENT-RESPONSE (v1) or PAYMENT-RESPONSE
// (v2), standard base64 of JSON. `success` must be present.
func DecodeSettleResponseHeader(value string) (*SettleResponse, error) {
	doc, err := decodeHeader(value)
	if err != nil {
		return nil, err
	}
	return decodeSettleResponse(doc)
}

func decodeSettleResponse(data []byte) (*SettleResponse, error) {
	const what = "settle response"
	m, err := members(data, what)
	if err != nil {
		return nil, err
	}
	s := &SettleResponse{}
	m.dropNulls("errorReason", "errorMessage", "payer", "transaction", "network", "amount", "extensions")
	if !m.has("success") {
		return nil, malformed("%s: no success", what)
	}
	if err := m.boolean("success", what, &s.Success); err != nil {
		return nil, err
	}
	for _, f := range []struct {
		key string
		dst *string
	}{
		{"errorReason", &s.ErrorReason}, {"errorMessage", &s.ErrorMessage}, {"payer", &s.Payer},
		{"transaction", &s.Transaction}, {"network", &s.Network}, {"amount", &s.Amount},
	} {
		if err := m.str(f.key, what, f.dst); err != nil {
			return nil, err
		}
	}
	if s.Extensions, err = m.rawMap("extensions", what); err != nil {
		return nil, err
	}
	s.Unknown = m.rest()
	return s, nil
}

// MarshalJSON writes the settlement in the member order of the SDK's seller, then every Unknown member.
func (s SettleResponse) MarshalJSON() ([]byte, error) {
	w := newObjectWriter()
	w.value("success", s.Success)
	if s.ErrorReason != "" {
		w.str("errorReason", s.ErrorReason)
	}
	if s.ErrorMessage != "" {
		w.str("errorMessage", s.ErrorMessage)
	}
	// The v1 seller writes payer last, the v2 seller right after the error; a v1 network name has no colon.
	v1 := !strings.Contains(s.Network, ":")
	if s.Payer != "" && !v1 {
		w.str("payer", s.Payer)
	}
	w.str("transaction", s.Transaction)
	w.str("network", s.Network)
	if s.Payer != "" && v1 {
		w.str("payer", s.Payer)
	}
	if s.Amount != "" {
		w.str("amount", s.Amount)
	}
	if s.Extensions != nil {
		w.rawMap("extensions", s.Extensions)
	}
	w.unknown(s.Unknown)
	return w.finish()
}

// UnmarshalJSON reads a settlement (header object or facilitator /settle answer), matching names exactly.
func (s *SettleResponse) UnmarshalJSON(data []byte) error {
	data, err := ownDocument(data)
	if err != nil {
		return err
	}
	d, err := decodeSettleResponse(data)
	if err != nil {
		return err
	}
	*s = *d
	return nil
}

func decodeVerifyResponse(data []byte) (*VerifyResponse, error) {
	const what = "verify response"
	m, err := members(data, what)
	if err != nil {
		return nil, err
	}
	v := &VerifyResponse{}
	m.dropNulls("invalidReason", "invalidMessage", "payer")
	if !m.has("isValid") {
		return nil, malformed("%s: no isValid", what)
	}
	if err := m.boolean("isValid", what, &v.IsValid); err != nil {
		return nil, err
	}
	for _, f := range []struct {
		key string
		dst *string
	}{{"invalidReason", &v.InvalidReason}, {"invalidMessage", &v.InvalidMessage}, {"payer", &v.Payer}} {
		if err := m.str(f.key, what, f.dst); err != nil {
			return nil, err
		}
	}
	v.Unknown = m.rest()
	return v, nil
}

// MarshalJSON writes the verify answer in the facilitator's member order, then every Unknown member.
func (v VerifyResponse) MarshalJSON() ([]byte, error) {
	w := newObjectWriter()
	w.value("isValid", v.IsValid)
	if v.InvalidReason != "" {
		w.str("invalidReason", v.InvalidReason)
	}
	if v.InvalidMessage != "" {
		w.str("invalidMessage", v.InvalidMessage)
	}
	if v.Payer != "" {
		w.str("payer", v.Payer)
	}
	w.unknown(v.Unknown)
	return w.finish()
}

// UnmarshalJSON reads a facilitator /verify answer; `isValid` must be present.
func (v *VerifyResponse) UnmarshalJSON(data []byte) error {
	data, err := ownDocument(data)
	if err != nil {
		return err
	}
	d, err := decodeVerifyResponse(data)
	if err != nil {
		return err
	}
	*v = *d
	return nil
}

func decodeFacilitatorRequest(data []byte) (*FacilitatorRequest, error) {
	const what = "facilitator request"
	m, err := members(data, what)
	if err != nil {
		return nil, err
	}
	f := &FacilitatorRequest{}
	if err := decodeVersion(&m, what, &f.X402Version); err != nil {
		return nil, err
	}
	raw, err := m.object("paymentPayload", what)
	if err != nil {
		return nil, err
	}
	if raw != nil {
		if f.PaymentPayload, err = decodePaymentPayload(raw); err != nil {
			return nil, err
		}
	}
	if raw, err = m.object("paymentRequirements", what); err != nil {
		return nil, err
	}
	if raw != nil {
		if f.PaymentRequirements, err = decodeRequirement(raw, f.X402Version); err != nil {
			return nil, err
		}
	}
	f.Unknown = m.rest()
	return f, nil
}

// MarshalJSON writes the /verify or /settle body; paymentRequirements uses the amount name of
// X402Version.
func (f FacilitatorRequest) MarshalJSON() ([]byte, error) {
	w := newObjectWriter()
	w.value("x402Version", f.X402Version)
	if f.PaymentPayload != nil {
		w.value("paymentPayload", f.PaymentPayload)
	}
	if f.PaymentRequirements != nil {
		b, err := encodeRequirement(f.PaymentRequirements, f.X402Version)
		if err != nil {
			return nil, err
		}
		w.raw("paymentRequirements", b)
	}
	w.unknown(f.Unknown)
	return w.finish()
}

// UnmarshalJSON reads a /verify or /settle body; paymentRequirements is read as the top-level
// x402Version says (v1: maxAmountRequired).
func (f *FacilitatorRequest) UnmarshalJSON(data []byte) error {
	data, err := ownDocument(data)
	if err != nil {
		return err
	}
	d, err := decodeFacilitatorRequest(data)
	if err != nil {
		return err
	}
	*f = *d
	return nil
}
