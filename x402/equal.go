package x402

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// Equal reports whether o, the `accepted` a v2 client echoed, matches r, the requirement the seller
// offered (or the option payguard approved). It mirrors @x402/core's paymentRequirementsMatchAccepted:
//
//   - every member other than `extra` must be structurally equal: scheme, network, amount, asset, payTo,
//     maxTimeoutSeconds, the v1 descriptive fields and every Unknown member, compared exactly (addresses
//     too: the SDK does not fold case);
//   - when r has an `extra`, o's `extra` must contain it: every member of r.Extra present in o.Extra with a
//     matching value, recursively; o may add members. Arrays and scalars must be equal.
//
// The relation is not symmetric: r.Equal(o) asks whether o honours r.
func (r Requirement) Equal(o Requirement) bool {
	if r.Scheme != o.Scheme || r.Network != o.Network || r.Amount != o.Amount || r.Asset != o.Asset ||
		r.PayTo != o.PayTo || r.MaxTimeoutSeconds != o.MaxTimeoutSeconds ||
		r.Resource != o.Resource || r.Description != o.Description || r.MimeType != o.MimeType {
		return false
	}
	// The amount is written under a different name in v1 and v2, so the SDK would see different objects.
	if (r.Version == V1) != (o.Version == V1) {
		return false
	}
	if !optionalRawEqual(r.OutputSchema, o.OutputSchema) {
		return false
	}
	if len(r.Unknown) != len(o.Unknown) {
		return false
	}
	for k, rv := range r.Unknown {
		ov, ok := o.Unknown[k]
		if !ok || !rawEqual(rv, ov) {
			return false
		}
	}
	if len(r.Extra) == 0 {
		return true
	}
	if len(o.Extra) == 0 {
		return false
	}
	want, err1 := parseJSONValue(r.Extra)
	got, err2 := parseJSONValue(o.Extra)
	if err1 != nil || err2 != nil {
		return false
	}
	return containsSubset(want, got)
}

func optionalRawEqual(a, b json.RawMessage) bool {
	if len(a) == 0 || len(b) == 0 {
		return len(a) == 0 && len(b) == 0
	}
	return rawEqual(a, b)
}

// rawEqual compares two JSON values structurally, as a JavaScript deep equality of the parsed values would:
// object member order does not matter and numbers compare by their float64 value.
func rawEqual(a, b json.RawMessage) bool {
	if bytes.Equal(a, b) {
		return true
	}
	va, err1 := parseJSONValue(a)
	vb, err2 := parseJSONValue(b)
	return err1 == nil && err2 == nil && valueEqual(va, vb)
}

// JSONEqual reports whether two JSON documents hold the same value (member order and insignificant
// whitespace aside; numbers compared as JavaScript does). Invalid JSON is never equal to anything.
func JSONEqual(a, b []byte) bool {
	va, err1 := parseJSONValue(a)
	vb, err2 := parseJSONValue(b)
	return err1 == nil && err2 == nil && valueEqual(va, vb)
}

func parseJSONValue(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, malformed("trailing data after JSON value")
	}
	return v, nil
}

func valueEqual(a, b any) bool {
	switch a := a.(type) {
	case map[string]any:
		b, ok := b.(map[string]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for k, av := range a {
			bv, ok := b[k]
			if !ok || !valueEqual(av, bv) {
				return false
			}
		}
		return true
	case []any:
		b, ok := b.([]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for i := range a {
			if !valueEqual(a[i], b[i]) {
				return false
			}
		}
		return true
	case json.Number:
		b, ok := b.(json.Number)
		return ok && numberEqual(a, b)
	default: // string, bool, nil
		return a == b
	}
}

// numberEqual compares JSON numbers by their float64 value, as JavaScript parses them.
func numberEqual(a, b json.Number) bool {
	if a == b {
		return true
	}
	fa, err1 := strconv.ParseFloat(string(a), 64)
	fb, err2 := strconv.ParseFloat(string(b), 64)
	return err1 == nil && err2 == nil && fa == fb
}

// containsSubset mirrors the SDK's objectContainsSubset: an object expects each of its members in actual
// (which may have more); anything else must be equal.
func containsSubset(expected, actual any) bool {
	em, ok := expected.(map[string]any)
	if !ok {
		return valueEqual(expected, actual)
	}
	am, ok := actual.(map[string]any)
	if !ok {
		return false
	}
	for k, ev := range em {
		av, ok := am[k]
		if !ok || !containsSubset(ev, av) {
			return false
		}
	}
	return true
}
