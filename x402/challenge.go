package x402

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"sync"
	"unsafe"

	"github.com/payguard/payguard/x402/jsonscan"
)

// ParsePaymentRequired reads a challenge object: a v1 body (PaymentRequirementsResponse) or a v2
// PaymentRequired (the decoded PAYMENT-REQUIRED header). x402Version must be 1 or 2 and `accepts` must be
// an array of objects. Members not modelled are kept in the Unknown maps, verbatim.
//
// At most MaxOptions options are read: a longer accepts array is refused (ErrTooManyOptions) as soon as
// its (MaxOptions+1)th entry is met, before any per-option work, so a challenge of thousands of empty
// options costs no more than one of 32. The document size, depth and UTF-8 limits of this package apply.
func ParsePaymentRequired(body []byte) (*PaymentRequired, error) {
	body, err := ownDocument(body)
	if err != nil {
		return nil, err
	}
	return decodePaymentRequired(sharedText(body), body)
}

// DecodePaymentRequiredHeader reads a v2 PAYMENT-REQUIRED header value (standard base64 of JSON). The
// decoded object must say x402Version 2.
func DecodePaymentRequiredHeader(value string) (*PaymentRequired, error) {
	doc, err := decodeHeader(value)
	if err != nil {
		return nil, err
	}
	p, err := decodePaymentRequired(sharedText(doc), doc)
	if err != nil {
		return nil, err
	}
	if p.X402Version != V2 {
		return nil, malformed("%s header carries x402Version %d, want 2", HeaderPaymentRequired, p.X402Version)
	}
	return p, nil
}

// MaxOptions is SPEC's limit on payment options per request (Limits: "Payment options per request: 32").
const MaxOptions = 32

// ErrTooManyOptions is returned (wrapping ErrMalformed) for a challenge with more than MaxOptions options.
var ErrTooManyOptions = fmt.Errorf("%w: too many payment options", ErrMalformed)

// decodePaymentRequired reads the challenge in data, a document of payguard's own; doc is data's text
// when it has one (sharedText), for string values without a copy each.
func decodePaymentRequired(doc document, data []byte) (*PaymentRequired, error) {
	const what = "challenge"
	var buf [16]jsonscan.Member // the object's members, on the stack (issue 36)
	m, err := membersIn(buf[:0], data, what)
	if err != nil {
		return nil, err
	}
	p := &PaymentRequired{}
	if err := decodeVersion(&m, what, &p.X402Version); err != nil {
		return nil, err
	}
	if err := m.strIn(doc, "error", what, &p.Error); err != nil {
		return nil, err
	}
	if p.X402Version == V2 {
		raw, err := m.object("resource", what)
		if err != nil {
			return nil, err
		}
		if raw != nil {
			if p.Resource, err = decodeResourceInfoIn(doc, raw); err != nil {
				return nil, err
			}
		}
	}
	accepts, ok := m.get("accepts")
	if !ok {
		return nil, malformed("%s: no accepts array", what)
	}
	if t := bytes.TrimSpace(accepts); len(t) == 0 || t[0] != '[' {
		return nil, malformed("%s.accepts: want an array", what)
	}
	var elems [4][]byte
	entries, more, ok := jsonscan.AppendArrayUpTo(elems[:0], accepts, MaxOptions)
	switch {
	case more:
		return nil, fmt.Errorf("%w: %s.accepts has more than %d payment options", ErrTooManyOptions, what, MaxOptions)
	case !ok:
		// jsonscan and encoding/json accept the same arrays: this is for encoding/json's error message.
		if _, err := rawArray(accepts); err != nil {
			return nil, malformed("%s.accepts: %v", what, err)
		}
		return nil, malformed("%s.accepts: not a JSON array", what)
	}
	m.take("accepts")
	p.Accepts = make([]Requirement, len(entries))
	for i, e := range entries {
		if err := decodeRequirementInto(&p.Accepts[i], doc, e, p.X402Version); err != nil {
			return nil, fmt.Errorf("accepts[%d]: %w", i, err)
		}
	}
	if p.Extensions, err = m.rawMap("extensions", what); err != nil {
		return nil, err
	}
	p.Unknown = m.rest()
	return p, nil
}

// decodeVersion takes the required x402Version member, which must be 1 or 2.
func decodeVersion(m *objectMembers, what string, dst *int) error {
	if !m.has("x402Version") {
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

// MarshalJSON writes the challenge in the member order of the SDKs, each accepts[] entry under the amount
// name of p.X402Version (`maxAmountRequired` for v1, `amount` for v2), then every Unknown member verbatim.
func (p PaymentRequired) MarshalJSON() ([]byte, error) { return p.appendJSON(make([]byte, 0, 256)) }

// appendJSON is MarshalJSON appending to dst.
func (p *PaymentRequired) appendJSON(dst []byte) ([]byte, error) {
	w := newObjectWriterOn(dst)
	w.value("x402Version", p.X402Version)
	if p.Error != "" {
		w.str("error", p.Error)
	}
	if p.Resource != nil {
		w.object("resource", p.Resource.appendJSON)
	}
	w.key("accepts")
	w.buf = append(w.buf, '[')
	for i := range p.Accepts {
		if i > 0 {
			w.buf = append(w.buf, ',')
		}
		b, err := appendRequirement(w.buf, &p.Accepts[i], p.X402Version)
		if err != nil {
			return nil, fmt.Errorf("accepts[%d]: %w", i, err)
		}
		w.buf = b
	}
	w.buf = append(w.buf, ']')
	if p.Extensions != nil {
		w.rawMap("extensions", p.Extensions)
	}
	w.unknown(p.Unknown)
	return w.finish()
}

// UnmarshalJSON reads a challenge as ParsePaymentRequired does, with the same checks.
func (p *PaymentRequired) UnmarshalJSON(data []byte) error {
	d, err := ParsePaymentRequired(data)
	if err != nil {
		return err
	}
	*p = *d
	return nil
}

// Narrowed returns a deep copy of p whose Accepts holds only entry i; p itself is not changed. Everything
// else (error, resource, extensions, unknown members) is kept, so the copy re-encodes to a challenge the
// SDK clients accept and whose single entry the seller still recognises. It returns nil when i is out of
// range.
func (p *PaymentRequired) Narrowed(i int) *PaymentRequired {
	if p == nil || i < 0 || i >= len(p.Accepts) {
		return nil
	}
	c := &PaymentRequired{
		X402Version: p.X402Version,
		Error:       p.Error,
		Accepts:     []Requirement{p.Accepts[i].clone()},
		Extensions:  cloneRawMap(p.Extensions),
		Unknown:     cloneRawMap(p.Unknown),
	}
	if p.Resource != nil {
		r := p.Resource.clone()
		c.Resource = &r
	}
	return c
}

func decodeResourceInfo(data []byte) (*ResourceInfo, error) {
	return decodeResourceInfoIn(document{}, data)
}

// decodeResourceInfoIn is decodeResourceInfo for data inside doc (see decodePaymentRequired).
func decodeResourceInfoIn(doc document, data []byte) (*ResourceInfo, error) {
	const what = "resource"
	var buf [16]jsonscan.Member
	m, err := membersIn(buf[:0], data, what)
	if err != nil {
		return nil, err
	}
	r := &ResourceInfo{}
	if err := m.strIn(doc, "url", what, &r.URL); err != nil {
		return nil, err
	}
	if err := m.strIn(doc, "description", what, &r.Description); err != nil {
		return nil, err
	}
	if err := m.strIn(doc, "mimeType", what, &r.MimeType); err != nil {
		return nil, err
	}
	r.Unknown = m.rest()
	return r, nil
}

// MarshalJSON writes url, description and mimeType, then every Unknown member verbatim.
func (r ResourceInfo) MarshalJSON() ([]byte, error) { return r.appendJSON(make([]byte, 0, 256)) }

// appendJSON is MarshalJSON appending to dst.
func (r *ResourceInfo) appendJSON(dst []byte) ([]byte, error) {
	w := newObjectWriterOn(dst)
	w.str("url", r.URL)
	if r.Description != "" {
		w.str("description", r.Description)
	}
	if r.MimeType != "" {
		w.str("mimeType", r.MimeType)
	}
	w.unknown(r.Unknown)
	return w.finish()
}

// UnmarshalJSON reads a resource object, matching member names exactly and keeping the rest in Unknown.
func (r *ResourceInfo) UnmarshalJSON(data []byte) error {
	data, err := ownDocument(data)
	if err != nil {
		return err
	}
	d, err := decodeResourceInfo(data)
	if err != nil {
		return err
	}
	*r = *d
	return nil
}

func (r *ResourceInfo) clone() ResourceInfo {
	c := *r
	c.Unknown = cloneRawMap(r.Unknown)
	return c
}

// rawArray is encoding/json's reading of an array into raw elements, for when jsonscan refuses one (for
// its error message; the two accept the same documents).
func rawArray(data []byte) ([][]byte, error) {
	var entries []json.RawMessage
	if err := json.Unmarshal(data, &entries); err != nil {
		return nil, err
	}
	out := make([][]byte, len(entries))
	for i, e := range entries {
		out[i] = e
	}
	return out, nil
}

// NarrowedView returns p as Narrowed(i) encodes, without copying anything: a shallow copy of p whose
// Accepts is entry i alone, sharing every other value with p. It is for encoding (the proxy narrows every
// allowed challenge it passes on: issue 36); a caller that keeps or changes the result wants Narrowed. It
// returns nil when i is out of range.
func (p *PaymentRequired) NarrowedView(i int) *PaymentRequired {
	if p == nil || i < 0 || i >= len(p.Accepts) {
		return nil
	}
	v := *p
	v.Accepts = p.Accepts[i : i+1 : i+1]
	return &v
}

// EncodePaymentRequiredHeader is EncodeHeaderJSON(p): the same header value, with the JSON written into
// a pooled buffer and the base64 into the one string returned.
func EncodePaymentRequiredHeader(p *PaymentRequired) (string, error) {
	if p == nil {
		return "", fmt.Errorf("x402: encode header: no challenge")
	}
	bp := encodePool.Get().(*[]byte)
	defer func() {
		if cap(*bp) <= 64<<10 {
			encodePool.Put(bp)
		}
	}()
	b, err := p.appendJSON((*bp)[:0])
	if err != nil {
		return "", fmt.Errorf("x402: encode header: %w", err)
	}
	*bp = b
	if !jsonscan.Valid(b) { // as marshalNoEscape checks every MarshalJSON's output
		return "", fmt.Errorf("x402: encode header: %T.MarshalJSON wrote invalid JSON", p)
	}
	return encodeBase64String(b), nil
}

// encodePool holds the buffers EncodePaymentRequiredHeader writes the JSON in.
var encodePool = sync.Pool{New: func() any { b := make([]byte, 0, 2048); return &b }}

// encodeBase64String is base64.StdEncoding.EncodeToString(src) in one allocation: the bytes encoded into
// are the string's and are never written again (as strings.Builder makes its string).
func encodeBase64String(src []byte) string {
	dst := make([]byte, base64.StdEncoding.EncodedLen(len(src)))
	base64.StdEncoding.Encode(dst, src)
	return unsafe.String(unsafe.SliceData(dst), len(dst))
}
