package x402

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/payguard/payguard/x402/jsonscan"
)

// This file keeps the challenge decoder as it was before issue 36's decode402 work (a map of members per
// object, a copy per string value, the header's alphabet checked byte by byte), unchanged but for its names: the differential fuzz test
// (FuzzDecodeSameAsReference) holds the faster decoder to the same accepted language, the same values and
// the same error messages.

func refParsePaymentRequired(body []byte) (*PaymentRequired, error) {
	if err := checkDocument(body); err != nil {
		return nil, err
	}
	return refDecodePaymentRequired(bytes.Clone(body))
}

func refDecodePaymentRequiredHeader(value string) (*PaymentRequired, error) {
	doc, err := refDecodeHeader(value)
	if err != nil {
		return nil, err
	}
	p, err := refDecodePaymentRequired(doc)
	if err != nil {
		return nil, err
	}
	if p.X402Version != V2 {
		return nil, malformed("%s header carries x402Version %d, want 2", HeaderPaymentRequired, p.X402Version)
	}
	return p, nil
}

func refDecodePaymentRequired(data []byte) (*PaymentRequired, error) {
	const what = "challenge"
	m, err := refMembers(data, what)
	if err != nil {
		return nil, err
	}
	p := &PaymentRequired{}
	if err := refDecodeVersion(m, what, &p.X402Version); err != nil {
		return nil, err
	}
	if err := m.str("error", what, &p.Error); err != nil {
		return nil, err
	}
	if p.X402Version == V2 {
		raw, err := m.object("resource", what)
		if err != nil {
			return nil, err
		}
		if raw != nil {
			if p.Resource, err = refDecodeResourceInfo(raw); err != nil {
				return nil, err
			}
		}
	}
	accepts, ok := m["accepts"]
	if !ok {
		return nil, malformed("%s: no accepts array", what)
	}
	if t := bytes.TrimSpace(accepts); len(t) == 0 || t[0] != '[' {
		return nil, malformed("%s.accepts: want an array", what)
	}
	entries, more, ok := jsonscan.ArrayUpTo(accepts, MaxOptions)
	switch {
	case more:
		return nil, fmt.Errorf("%w: %s.accepts has more than %d payment options", ErrTooManyOptions, what, MaxOptions)
	case !ok:
		if _, err := rawArray(accepts); err != nil {
			return nil, malformed("%s.accepts: %v", what, err)
		}
		return nil, malformed("%s.accepts: not a JSON array", what)
	}
	delete(m, "accepts")
	p.Accepts = make([]Requirement, 0, len(entries))
	for i, e := range entries {
		r, err := refDecodeRequirement(e, p.X402Version)
		if err != nil {
			return nil, fmt.Errorf("accepts[%d]: %w", i, err)
		}
		p.Accepts = append(p.Accepts, *r)
	}
	if p.Extensions, err = m.rawMap("extensions", what); err != nil {
		return nil, err
	}
	p.Unknown = m.rest()
	return p, nil
}

func refDecodeVersion(m refObjectMembers, what string, dst *int) error {
	if _, ok := m["x402Version"]; !ok {
		return malformed("%s: no x402Version", what)
	}
	var v int64
	if err := m.integer("x402Version", what, &v); err != nil {
		return err
	}
	if v != V1 && v != V2 {
		return malformed("%s: unsupported x402Version %d (want 1 or 2)", what, v)
	}
	*dst = int(v)
	return nil
}

func refDecodeResourceInfo(data []byte) (*ResourceInfo, error) {
	const what = "resource"
	m, err := refMembers(data, what)
	if err != nil {
		return nil, err
	}
	r := &ResourceInfo{}
	for _, f := range []struct {
		key string
		dst *string
	}{{"url", &r.URL}, {"description", &r.Description}, {"mimeType", &r.MimeType}} {
		if err := m.str(f.key, what, f.dst); err != nil {
			return nil, err
		}
	}
	r.Unknown = m.rest()
	return r, nil
}

func refDecodeRequirement(data []byte, version int) (*Requirement, error) {
	const what = "requirement"
	m, err := refMembers(data, what)
	if err != nil {
		return nil, err
	}
	r := &Requirement{Version: version}
	for _, f := range []struct {
		key string
		dst *string
	}{
		{"scheme", &r.Scheme},
		{"network", &r.Network},
		{amountKey(version), &r.Amount},
		{"asset", &r.Asset},
		{"payTo", &r.PayTo},
	} {
		if err := m.str(f.key, what, f.dst); err != nil {
			return nil, err
		}
	}
	if err := m.integer("maxTimeoutSeconds", what, &r.MaxTimeoutSeconds); err != nil {
		return nil, err
	}
	r.Extra = m.raw("extra")
	if version == V1 {
		for _, f := range []struct {
			key string
			dst *string
		}{
			{"resource", &r.Resource},
			{"description", &r.Description},
			{"mimeType", &r.MimeType},
		} {
			if err := m.str(f.key, what, f.dst); err != nil {
				return nil, err
			}
		}
		r.OutputSchema = m.raw("outputSchema")
	}
	r.Unknown = m.rest()
	return r, nil
}

func refMembers(data []byte, what string) (refObjectMembers, error) {
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return nil, malformed("%s: want a JSON object", what)
	}
	var m map[string]json.RawMessage
	if ms, ok := jsonscan.Object(data); ok {
		m = make(map[string]json.RawMessage, len(ms))
		for _, mb := range ms {
			m[mb.Name] = mb.Value
		}
	} else if err := json.Unmarshal(data, &m); err != nil {
		return nil, malformed("%s: %v", what, err)
	}
	for k := range m {
		if strings.ContainsRune(k, utf8.RuneError) {
			return nil, malformed("%s: member name holds U+FFFD or an unpaired surrogate escape", what)
		}
	}
	return refObjectMembers(m), nil
}

type refObjectMembers map[string]json.RawMessage

func (m refObjectMembers) str(key, what string, dst *string) error {
	raw, ok := m[key]
	if !ok {
		return nil
	}
	if t := bytes.TrimSpace(raw); len(t) == 0 || t[0] != '"' {
		return malformed("%s.%s: want a string", what, key)
	}
	v, ok := jsonscan.String(raw)
	if !ok {
		if err := json.Unmarshal(raw, &v); err != nil {
			return malformed("%s.%s: %v", what, key, err)
		}
	}
	if strings.ContainsRune(v, utf8.RuneError) {
		return malformed("%s.%s: string holds U+FFFD or an unpaired surrogate escape", what, key)
	}
	*dst = v
	delete(m, key)
	return nil
}

func (m refObjectMembers) integer(key, what string, dst *int64) error {
	raw, ok := m[key]
	if !ok {
		return nil
	}
	if isNull(raw) {
		return malformed("%s.%s: want an integer, got null", what, key)
	}
	if v, err := strconv.ParseInt(string(bytes.TrimSpace(raw)), 10, 64); err == nil {
		*dst = v
		delete(m, key)
		return nil
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		return malformed("%s.%s: want an integer: %v", what, key, err)
	}
	delete(m, key)
	return nil
}

func (m refObjectMembers) raw(key string) json.RawMessage {
	raw, ok := m[key]
	if !ok {
		return nil
	}
	delete(m, key)
	return raw
}

func (m refObjectMembers) object(key, what string) (json.RawMessage, error) {
	raw, ok := m[key]
	if !ok {
		return nil, nil
	}
	if t := bytes.TrimSpace(raw); len(t) == 0 || t[0] != '{' {
		return nil, malformed("%s.%s: want a JSON object", what, key)
	}
	delete(m, key)
	return raw, nil
}

func (m refObjectMembers) rawMap(key, what string) (map[string]json.RawMessage, error) {
	raw, err := m.object(key, what)
	if err != nil || raw == nil {
		return nil, err
	}
	inner, err := refMembers(raw, what+"."+key)
	if err != nil {
		return nil, err
	}
	if inner == nil {
		inner = refObjectMembers{}
	}
	return map[string]json.RawMessage(inner), nil
}

func (m refObjectMembers) rest() map[string]json.RawMessage {
	if len(m) == 0 {
		return nil
	}
	return map[string]json.RawMessage(m)
}

func refDecodeHeader(value string) ([]byte, error) {
	if value == "" {
		return nil, malformed("empty header value")
	}
	if len(value) > MaxHeaderBytes {
		return nil, malformed("header value is %d bytes, larger than the %d byte limit", len(value), MaxHeaderBytes)
	}
	body, pad := value, 0
	for pad < 2 && len(body) > 0 && body[len(body)-1] == '=' {
		body, pad = body[:len(body)-1], pad+1
	}
	for i := 0; i < len(body); i++ {
		c := body[i]
		if !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '+' || c == '/') {
			return nil, malformed("header value is not standard base64 (byte %q at offset %d)", c, i)
		}
	}
	if len(body)%4 == 1 || (pad > 0 && (len(body)+pad)%4 != 0) {
		return nil, malformed("header value has an invalid base64 length")
	}
	doc, err := base64.RawStdEncoding.DecodeString(body)
	if err != nil {
		return nil, malformed("header value is not standard base64: %v", err)
	}
	if err := checkDocument(doc); err != nil {
		return nil, err
	}
	return doc, nil
}
