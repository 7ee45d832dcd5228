// Package jsonscan splits JSON objects and arrays into their members without reflection. x402 and the
// preflight input read every document member by member with exact names (see x402's members); doing that
// with encoding/json re-validated and re-scanned each nesting level and built maps by reflection, which was
// the larger part of parsing a preflight input.
//
// It accepts exactly what encoding/json accepts (json.Valid: RFC 8259 syntax, any bytes >= 0x20 inside
// strings, nesting up to 10,000 levels); the differential fuzz tests hold it to that. It reports only
// whether a document is acceptable: callers fall back to encoding/json when it is not, so error messages
// stay encoding/json's.
package jsonscan

import "encoding/json"

// maxDepth is encoding/json's nesting limit (its scanner's maxNestingDepth).
const maxDepth = 10000

// Member is one member of an object: its name as encoding/json decodes it, and its value's exact bytes
// (no surrounding whitespace), as a json.RawMessage member would hold them.
type Member struct {
	Name  string
	Value []byte
	// Plain is true when Value is a plain string token: printable ASCII without escapes, so that its
	// decoded value is Value without its quotes (what PlainString would return), known without scanning
	// it again.
	Plain bool
}

// Valid reports whether data is one valid JSON value with optional surrounding whitespace, as json.Valid.
func Valid(data []byte) bool {
	i := skipSpace(data, 0)
	end, ok := value(data, i, 0)
	return ok && skipSpace(data, end) == len(data)
}

// Depth returns the deepest nesting of arrays and objects in data: brackets outside strings, counted on the
// raw bytes, so it needs no valid document (x402 checks it first, the preflight input after Valid). Both
// hold documents to their own limits, far below encoding/json's, with it before decoding.
func Depth(data []byte) int {
	depth, deepest := 0, 0
	for i := 0; i < len(data); i++ {
		switch data[i] {
		case '"':
			// Skip the string: up to the next quote not escaped by a backslash (or the end).
			for i++; i < len(data) && data[i] != '"'; i++ {
				if data[i] == '\\' {
					i++
				}
			}
		case '{', '[':
			depth++
			deepest = max(deepest, depth)
		case '}', ']':
			depth--
		}
	}
	return deepest
}

// Object returns the members of data, which must be one JSON object with optional surrounding whitespace,
// in document order (a repeated name appears twice; encoding/json keeps the last). Values are sub-slices of
// data whose capacity ends with the value, so appending to one never writes into data. ok is false for
// anything encoding/json would not decode into a map.
func Object(data []byte) (members []Member, ok bool) { return AppendObject(nil, data) }

// AppendObject is Object appending the members to dst: a caller that reads one object at a time can hand
// it a buffer of its own (on its stack), so that reading the members allocates nothing (issue 36: the proxy
// reads three objects per 402). With a nil dst it allocates as Object does. On failure it returns nil.
func AppendObject(dst []Member, data []byte) (members []Member, ok bool) {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return nil, false
	}
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		if dst == nil {
			dst = []Member{}
		}
		return dst, skipSpace(data, i+1) == len(data)
	}
	members = dst
	if members == nil {
		// Room for the members of the objects x402 reads (a requirement has seven or eight), so that
		// appending does not grow the slice four times: one allocation instead of up to five (issue 36).
		members = make([]Member, 0, 8)
	}
	for {
		if i >= len(data) || data[i] != '"' {
			return nil, false
		}
		nameEnd, plain, ok := str(data, i)
		if !ok {
			return nil, false
		}
		name, ok := decodeName(data[i:nameEnd], plain)
		if !ok {
			return nil, false
		}
		i = skipSpace(data, nameEnd)
		if i >= len(data) || data[i] != ':' {
			return nil, false
		}
		start := skipSpace(data, i+1)
		var end int
		plainValue := false
		if start < len(data) && data[start] == '"' {
			end, plainValue, ok = str(data, start)
		} else {
			end, ok = value(data, start, 1)
		}
		if !ok {
			return nil, false
		}
		members = append(members, Member{Name: name, Value: data[start:end:end], Plain: plainValue})
		i = skipSpace(data, end)
		if i >= len(data) {
			return nil, false
		}
		switch data[i] {
		case ',':
			i = skipSpace(data, i+1)
		case '}':
			return members, skipSpace(data, i+1) == len(data)
		default:
			return nil, false
		}
	}
}

// Array returns the elements of data, which must be one JSON array with optional surrounding whitespace,
// as sub-slices of data (capacity capped as in Object). ok is false for anything encoding/json would not
// decode into a []json.RawMessage.
func Array(data []byte) (elems [][]byte, ok bool) {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '[' {
		return nil, false
	}
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == ']' {
		return [][]byte{}, skipSpace(data, i+1) == len(data)
	}
	for {
		end, ok := value(data, i, 1)
		if !ok {
			return nil, false
		}
		elems = append(elems, data[i:end:end])
		i = skipSpace(data, end)
		if i >= len(data) {
			return nil, false
		}
		switch data[i] {
		case ',':
			i = skipSpace(data, i+1)
		case ']':
			return elems, skipSpace(data, i+1) == len(data)
		default:
			return nil, false
		}
	}
}

// ArrayUpTo is Array for at most n elements: it stops at the (n+1)th element and reports more, without
// scanning or keeping anything past it, so a hostile array costs O(n) work and memory whatever its length.
// ok reports whether what was scanned is valid (with more, the rest was not looked at).
func ArrayUpTo(data []byte, n int) (elems [][]byte, more, ok bool) {
	return AppendArrayUpTo(nil, data, n)
}

// AppendArrayUpTo is ArrayUpTo appending the elements to dst (see AppendObject). On failure it returns nil.
func AppendArrayUpTo(dst [][]byte, data []byte, n int) (elems [][]byte, more, ok bool) {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '[' {
		return nil, false, false
	}
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == ']' {
		if dst == nil {
			dst = [][]byte{}
		}
		return dst, false, skipSpace(data, i+1) == len(data)
	}
	elems = dst
	if elems == nil {
		elems = make([][]byte, 0, min(n, 8))
	}
	start := len(elems)
	for {
		if len(elems)-start == n {
			return elems, true, true
		}
		end, ok := value(data, i, 1)
		if !ok {
			return nil, false, false
		}
		elems = append(elems, data[i:end:end])
		i = skipSpace(data, end)
		if i >= len(data) {
			return nil, false, false
		}
		switch data[i] {
		case ',':
			i = skipSpace(data, i+1)
		case ']':
			return elems, false, skipSpace(data, i+1) == len(data)
		default:
			return nil, false, false
		}
	}
}

// String decodes raw, one JSON string value without surrounding whitespace, as json.Unmarshal into a
// string would. ok is false when raw is not a string.
func String(raw []byte) (s string, ok bool) {
	if len(raw) < 2 || raw[0] != '"' {
		return "", false
	}
	end, plain, ok := str(raw, 0)
	if !ok || end != len(raw) {
		return "", false
	}
	return decodeName(raw, plain)
}

// PlainString returns the contents of raw, one JSON string value without surrounding whitespace, when it
// is plain: printable ASCII without escapes, so that its decoded value is exactly those bytes (a sub-slice
// of raw). ok is false for any other raw, a string with escapes or non-ASCII bytes included: decode those
// with String.
func PlainString(raw []byte) (contents []byte, ok bool) {
	if len(raw) < 2 || raw[0] != '"' {
		return nil, false
	}
	end, plain, ok := str(raw, 0)
	if !ok || !plain || end != len(raw) {
		return nil, false
	}
	return raw[1 : len(raw)-1], true
}

// decodeName decodes a string token: plain ones (printable ASCII, no escapes) directly, the rest with
// encoding/json, so escapes, invalid UTF-8 and lone surrogates become what encoding/json makes of them.
func decodeName(tok []byte, plain bool) (string, bool) {
	if plain {
		return plainName(tok[1 : len(tok)-1]), true
	}
	var s string
	if err := json.Unmarshal(tok, &s); err != nil {
		return "", false
	}
	return s, true
}

func skipSpace(data []byte, i int) int {
	for i < len(data) {
		switch data[i] {
		case ' ', '\t', '\r', '\n':
			i++
		default:
			return i
		}
	}
	return i
}

// value checks the JSON value starting at data[i] (no leading whitespace) and returns the index just past
// it. depth is the number of arrays and objects around it.
func value(data []byte, i, depth int) (int, bool) {
	if i >= len(data) {
		return i, false
	}
	switch c := data[i]; {
	case c == '{':
		return object(data, i, depth+1)
	case c == '[':
		return array(data, i, depth+1)
	case c == '"':
		end, _, ok := str(data, i)
		return end, ok
	case c == '-' || '0' <= c && c <= '9':
		return number(data, i)
	case c == 't':
		return literal(data, i, "true")
	case c == 'f':
		return literal(data, i, "false")
	case c == 'n':
		return literal(data, i, "null")
	}
	return i, false
}

func object(data []byte, i, depth int) (int, bool) {
	if depth > maxDepth {
		return i, false
	}
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return i + 1, true
	}
	for {
		if i >= len(data) || data[i] != '"' {
			return i, false
		}
		end, _, ok := str(data, i)
		if !ok {
			return i, false
		}
		i = skipSpace(data, end)
		if i >= len(data) || data[i] != ':' {
			return i, false
		}
		if i, ok = value(data, skipSpace(data, i+1), depth); !ok {
			return i, false
		}
		i = skipSpace(data, i)
		if i >= len(data) {
			return i, false
		}
		switch data[i] {
		case ',':
			i = skipSpace(data, i+1)
		case '}':
			return i + 1, true
		default:
			return i, false
		}
	}
}

func array(data []byte, i, depth int) (int, bool) {
	if depth > maxDepth {
		return i, false
	}
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == ']' {
		return i + 1, true
	}
	for {
		var ok bool
		if i, ok = value(data, i, depth); !ok {
			return i, false
		}
		i = skipSpace(data, i)
		if i >= len(data) {
			return i, false
		}
		switch data[i] {
		case ',':
			i = skipSpace(data, i+1)
		case ']':
			return i + 1, true
		default:
			return i, false
		}
	}
}

// str checks the string starting at data[i] (a '"') and returns the index past its closing quote. plain
// means printable ASCII without escapes: its decoded value is its bytes.
func str(data []byte, i int) (end int, plain, ok bool) {
	plain = true
	for i++; i < len(data); i++ {
		// Most string bytes are plain ASCII: skip them with one table load each before the full switch.
		for i < len(data) && strPlain[data[i]] {
			i++
		}
		if i >= len(data) {
			break
		}
		switch c := data[i]; {
		case c == '"':
			return i + 1, plain, true
		case c == '\\':
			plain = false
			i++
			if i >= len(data) {
				return i, false, false
			}
			switch data[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(data) {
					return i, false, false
				}
				for _, h := range data[i+1 : i+5] {
					if !('0' <= h && h <= '9' || 'a' <= h && h <= 'f' || 'A' <= h && h <= 'F') {
						return i, false, false
					}
				}
				i += 4
			default:
				return i, false, false
			}
		case c < 0x20:
			return i, false, false
		case c >= 0x80:
			plain = false
		}
	}
	return i, false, false
}

// strPlain marks the bytes a string holds as they are: ASCII from 0x20 except the quote and the backslash.
var strPlain = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// number checks -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? starting at data[i].
func number(data []byte, i int) (int, bool) {
	if data[i] == '-' {
		i++
	}
	switch {
	case i < len(data) && data[i] == '0':
		i++
	case i < len(data) && '1' <= data[i] && data[i] <= '9':
		i = digits(data, i)
	default:
		return i, false
	}
	if i < len(data) && data[i] == '.' {
		j := digits(data, i+1)
		if j == i+1 {
			return i, false
		}
		i = j
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		i++
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		j := digits(data, i)
		if j == i {
			return i, false
		}
		i = j
	}
	return i, true
}

func digits(data []byte, i int) int {
	for i < len(data) && '0' <= data[i] && data[i] <= '9' {
		i++
	}
	return i
}

func literal(data []byte, i int, lit string) (int, bool) {
	if len(data)-i < len(lit) || string(data[i:i+len(lit)]) != lit {
		return i, false
	}
	return i + len(lit), true
}
