package x402

import (
	"bytes"
	"encoding/json"

	"github.com/payguard/payguard/x402/jsonscan"
)

// decodeRequirement reads one accepts[] entry (or a v2 `accepted`, or a facilitator's
// paymentRequirements) of the given protocol version.
//
// The amount is read from `maxAmountRequired` in v1 and from `amount` in v2; the other name, if present,
// stays in Unknown. The v1-only members (resource, description, mimeType, outputSchema) are modelled only
// for v1: in a v2 entry they stay in Unknown, verbatim, whatever their type.
func decodeRequirement(data []byte, version int) (*Requirement, error) {
	r := &Requirement{}
	if err := decodeRequirementInto(r, document{}, data, version); err != nil {
		return nil, err
	}
	return r, nil
}

// decodeRequirementInto is decodeRequirement into *r (a challenge's own accepts slot), for data inside doc
// (see decodePaymentRequired). On an error *r is left partly written.
func decodeRequirementInto(r *Requirement, doc document, data []byte, version int) error {
	const what = "requirement"
	var buf [16]jsonscan.Member
	m, err := membersIn(buf[:0], data, what)
	if err != nil {
		return err
	}
	*r = Requirement{Version: version}
	for _, f := range [...]struct {
		key string
		dst *string
	}{
		{"scheme", &r.Scheme},
		{"network", &r.Network},
		{amountKey(version), &r.Amount},
		{"asset", &r.Asset},
		{"payTo", &r.PayTo},
	} {
		if err := m.strIn(doc, f.key, what, f.dst); err != nil {
			return err
		}
	}
	if err := m.integer("maxTimeoutSeconds", what, &r.MaxTimeoutSeconds); err != nil {
		return err
	}
	r.Extra = m.raw("extra")
	if version == V1 {
		for _, f := range [...]struct {
			key string
			dst *string
		}{
			{"resource", &r.Resource},
			{"description", &r.Description},
			{"mimeType", &r.MimeType},
		} {
			if err := m.strIn(doc, f.key, what, f.dst); err != nil {
				return err
			}
		}
		r.OutputSchema = m.raw("outputSchema")
	}
	r.Unknown = m.rest()
	return nil
}

// amountKey is the JSON name of a requirement's amount in the given protocol version.
func amountKey(version int) string {
	if version == V1 {
		return "maxAmountRequired"
	}
	return "amount"
}

// inferRequirementVersion guesses the version of a lone requirement (one not read as part of a challenge):
// a v1 entry carries `maxAmountRequired` and no `amount`.
func inferRequirementVersion(data []byte) int {
	var probe map[string]json.RawMessage
	if json.Unmarshal(data, &probe) != nil {
		return V2
	}
	_, v1 := probe["maxAmountRequired"]
	_, v2 := probe["amount"]
	if v1 && !v2 {
		return V1
	}
	return V2
}

// encodeRequirement writes r as the given protocol version wants it, in the member order of the SDKs.
func encodeRequirement(r *Requirement, version int) ([]byte, error) {
	return appendRequirement(make([]byte, 0, 256), r, version)
}

// appendRequirement is encodeRequirement appending to dst.
func appendRequirement(dst []byte, r *Requirement, version int) ([]byte, error) {
	w := newObjectWriterOn(dst)
	w.str("scheme", r.Scheme)
	w.str("network", r.Network)
	if version == V1 {
		w.str("maxAmountRequired", r.Amount)
		if r.Resource != "" {
			w.str("resource", r.Resource)
		}
		// Always written, "" included: the v1 seller writes them so (description ?? ""), and the v1 client's
		// schema requires both, refusing a narrowed challenge without them.
		w.str("description", r.Description)
		w.str("mimeType", r.MimeType)
		w.str("payTo", r.PayTo)
		w.value("maxTimeoutSeconds", r.MaxTimeoutSeconds)
		w.str("asset", r.Asset)
	} else {
		w.str("amount", r.Amount)
		w.str("asset", r.Asset)
		w.str("payTo", r.PayTo)
		w.value("maxTimeoutSeconds", r.MaxTimeoutSeconds)
		// A v2 entry built in Go may still carry the v1 descriptive fields; keep them rather than drop them.
		if r.Resource != "" {
			w.str("resource", r.Resource)
		}
		if r.Description != "" {
			w.str("description", r.Description)
		}
		if r.MimeType != "" {
			w.str("mimeType", r.MimeType)
		}
	}
	if len(r.OutputSchema) > 0 {
		w.raw("outputSchema", r.OutputSchema)
	}
	if len(r.Extra) > 0 {
		w.raw("extra", r.Extra)
	}
	w.unknown(r.Unknown)
	return w.finish()
}

// MarshalJSON writes the requirement under the amount name of r.Version (`maxAmountRequired` for 1,
// `amount` otherwise), known members in the SDK's order, then every Unknown member verbatim.
func (r Requirement) MarshalJSON() ([]byte, error) {
	return encodeRequirement(&r, r.Version)
}

// UnmarshalJSON reads a lone requirement, inferring its version from the amount member's name
// (`maxAmountRequired` alone means v1). Members are matched by exact name.
func (r *Requirement) UnmarshalJSON(data []byte) error {
	data, err := ownDocument(data)
	if err != nil {
		return err
	}
	d, err := decodeRequirement(data, inferRequirementVersion(data))
	if err != nil {
		return err
	}
	*r = *d
	return nil
}

// clone returns a deep copy of r, so that a narrowed challenge shares no memory with the original.
func (r *Requirement) clone() Requirement {
	c := *r
	c.Extra = cloneRaw(r.Extra)
	c.OutputSchema = cloneRaw(r.OutputSchema)
	c.Unknown = cloneRawMap(r.Unknown)
	return c
}

func cloneRaw(b json.RawMessage) json.RawMessage {
	if b == nil {
		return nil
	}
	return append(json.RawMessage(nil), b...)
}

func cloneRawMap(m map[string]json.RawMessage) map[string]json.RawMessage {
	if m == nil {
		return nil
	}
	c := make(map[string]json.RawMessage, len(m))
	for k, v := range m {
		c[k] = cloneRaw(v)
	}
	return c
}

// ExtraString reads one string member of the requirement's `extra` object (SVM's feePayer and memo). ok is
// false when extra or the member is absent; a member that is present but not a string, or an extra that is
// not an object, is an error.
func (r *Requirement) ExtraString(key string) (value string, ok bool, err error) {
	if len(r.Extra) == 0 || isNull(r.Extra) {
		return "", false, nil
	}
	m, err := members(bytes.Clone(r.Extra), "extra")
	if err != nil {
		return "", false, err
	}
	if !m.has(key) {
		return "", false, nil
	}
	if err := m.str(key, "extra", &value); err != nil {
		return "", false, err
	}
	return value, true, nil
}
