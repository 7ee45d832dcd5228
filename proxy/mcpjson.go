package proxy

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/payguard/payguard/x402"
	"github.com/payguard/payguard/x402/jsonscan"
)

// JSON as the MCP guard reads it (mcp.go). Peers read JSON differently: which of two equal names wins
// (Python, Go and JavaScript keep the last; others the first or refuse), whether names match ignoring case
// (Go's encoding/json into a struct), whether NaN parses (Python's json, pydantic). A document that carries
// x402 is therefore read only when every reading agrees: valid RFC 8259 JSON, nesting within SPEC §10's
// 32, and no object with two names equal ignoring case. Anything else that mentions x402 is refused, never
// guessed at.

// maxMCPMessage bounds one JSON-RPC document or SSE message the guard reads (SPEC §10's 64 KiB body limit).
const maxMCPMessage = x402.MaxBodyBytes

// x402Escapes are the JSON escapes that spell a letter of "x402" ("\u0078" is "x"): a name can hide from a
// byte search only behind one of them, and JSON has no other way to write these characters.
var x402Escapes = [][]byte{[]byte(`\u0078`), []byte(`\u0058`), []byte(`\u0034`), []byte(`\u0030`), []byte(`\u0032`)}

// mentionsX402 reports whether data may name anything of x402 (a payment, a payment-required object, a
// settlement): "x402" in any case, or an escape that could spell one of its characters. A document that
// does not is passed on without being parsed: no JSON reader can find an x402 name in it.
func mentionsX402(data []byte) bool {
	for i := 0; i+4 <= len(data); i++ {
		c := data[i]
		if (c == 'x' || c == 'X') && data[i+1] == '4' && data[i+2] == '0' && data[i+3] == '2' {
			return true
		}
		if c == '\\' && data[i+1] == 'u' && i+6 <= len(data) {
			esc := bytes.ToLower(data[i : i+6])
			for _, e := range x402Escapes {
				if bytes.Equal(esc, bytes.ToLower(e)) {
					return true
				}
			}
		}
	}
	return false
}

// jsonObject is one decoded object: its members by exact name (checked unique ignoring case).
type jsonObject map[string][]byte

// strictObject reads data as one JSON object whose names are unique ignoring case, with no check below.
func strictObject(data []byte) (jsonObject, bool) {
	ms, ok := jsonscan.Object(data)
	if !ok {
		return nil, false
	}
	obj := make(jsonObject, len(ms))
	seen := make(map[string]struct{}, len(ms))
	for _, m := range ms {
		folded := strings.ToLower(m.Name)
		if _, dup := seen[folded]; dup {
			return nil, false
		}
		seen[folded] = struct{}{}
		obj[m.Name] = m.Value
	}
	return obj, true
}

// checkStrict applies the guard's reading rules to a whole document: valid JSON, nesting within
// x402.MaxDepth, and no object anywhere with two names equal ignoring case.
func checkStrict(data []byte) error {
	if !jsonscan.Valid(data) {
		return fmt.Errorf("not valid JSON")
	}
	if jsonscan.Depth(data) > x402.MaxDepth {
		return fmt.Errorf("JSON nested deeper than %d", x402.MaxDepth)
	}
	return noDuplicates(bytes.TrimSpace(data))
}

// noDuplicates finds an object with two names equal ignoring case, in one pass over a valid document (a
// stack of the names seen in each open object), so that its cost does not grow with the nesting.
func noDuplicates(v []byte) error {
	type frame struct {
		object bool
		names  map[string]struct{}
		key    bool // the next string in this object is a name
	}
	var stack []frame
	for i := 0; i < len(v); i++ {
		switch c := v[i]; c {
		case '{':
			stack = append(stack, frame{object: true, key: true})
		case '[':
			stack = append(stack, frame{})
		case '}', ']':
			stack = stack[:len(stack)-1]
		case ',':
			if n := len(stack); n > 0 && stack[n-1].object {
				stack[n-1].key = true
			}
		case '"':
			start, plain := i, true
			for i++; v[i] != '"'; i++ {
				if v[i] == '\\' {
					plain = false
					i++
				}
			}
			n := len(stack)
			if n == 0 || !stack[n-1].object || !stack[n-1].key {
				continue
			}
			f := &stack[n-1]
			f.key = false
			tok := v[start : i+1]
			name := string(tok[1 : len(tok)-1])
			if !plain {
				var ok bool
				if name, ok = jsonString(tok); !ok {
					return fmt.Errorf("a member name cannot be read")
				}
			}
			folded := strings.ToLower(name)
			if f.names == nil {
				f.names = make(map[string]struct{}, 8)
			}
			if _, dup := f.names[folded]; dup {
				return fmt.Errorf("an object names %q twice (ignoring case): readers disagree on which one counts", name)
			}
			f.names[folded] = struct{}{}
		}
	}
	return nil
}

// foldKey is a member name as the most lenient reader could take it: lower case, without separators, so
// "x402/payment", "X402_Payment" and "x402-payment" are one name.
func foldKey(name string) string {
	var b strings.Builder
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case 'A' <= c && c <= 'Z':
			b.WriteByte(c + 'a' - 'A')
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
			b.WriteByte(c)
		}
	}
	return b.String()
}

// paymentKeyFolded is the folded payment key of the x402 MCP transport (MetaPayment).
var paymentKeyFolded = foldKey(metaPayment)

// countPaymentKeys counts the member names anywhere in doc (a checkStrict document) that fold to the
// payment key: the one in the transport's place, and any other a lenient reader might take for it.
func countPaymentKeys(doc []byte) int {
	n := 0
	walkNames(bytes.TrimSpace(doc), func(name string) {
		if foldKey(name) == paymentKeyFolded {
			n++
		}
	})
	return n
}

func walkNames(v []byte, visit func(string)) {
	if len(v) == 0 {
		return
	}
	switch v[0] {
	case '{':
		ms, _ := jsonscan.Object(v)
		for _, m := range ms {
			visit(m.Name)
			walkNames(m.Value, visit)
		}
	case '[':
		elems, _ := jsonscan.Array(v)
		for _, e := range elems {
			walkNames(e, visit)
		}
	}
}

// jsonString decodes a JSON string value; ok is false for any other value.
func jsonString(raw []byte) (string, bool) {
	return jsonscan.String(bytes.TrimSpace(raw))
}

// withMembers re-encodes obj (a strictObject's source) with the named members' values replaced (nil
// deletes one), keeping every other member's bytes and the order.
func withMembers(obj []byte, set map[string][]byte) ([]byte, error) {
	ms, ok := jsonscan.Object(obj)
	if !ok {
		return nil, fmt.Errorf("not a JSON object")
	}
	out := []byte{'{'}
	first := true
	put := func(name string, v []byte) {
		if !first {
			out = append(out, ',')
		}
		first = false
		out = appendJSONString(out, name)
		out = append(out, ':')
		out = append(out, v...)
	}
	done := map[string]bool{}
	for _, m := range ms {
		v := m.Value
		if nv, ok := set[m.Name]; ok {
			done[m.Name] = true
			if nv == nil {
				continue
			}
			v = nv
		}
		put(m.Name, v)
	}
	for name, v := range set {
		if !done[name] && v != nil {
			put(name, v)
		}
	}
	return append(out, '}'), nil
}

// appendJSONString appends s as a JSON string.
func appendJSONString(dst []byte, s string) []byte {
	b, _ := marshalJSON(s)
	return append(dst, b...)
}
