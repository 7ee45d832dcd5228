package x402

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/payguard/payguard/x402/jsonscan"
)

// Limits applied to every document this package decodes. They keep a hostile seller or agent from making
// the proxy buffer or walk arbitrarily large input.
const (
	// MaxBodyBytes bounds a JSON document (a v1 challenge body, a facilitator body, a decoded header): SPEC §10's
	// 64 KiB body limit. It is the one declaration of that limit; the server, the engine and the CLI use it.
	MaxBodyBytes = 64 << 10
	// MaxHeaderBytes bounds a base64 header value before it is decoded.
	MaxHeaderBytes = 64 << 10
	// MaxDepth bounds the nesting of arrays and objects in any decoded document (SPEC §10: JSON depth 32).
	MaxDepth = 32
)

// ErrMalformed is wrapped by every decode error of this package: the input is not a well-formed x402
// document (bad base64, bad JSON, wrong member types, a missing or unsupported x402Version, too large).
var ErrMalformed = errors.New("x402: malformed input")

func malformed(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrMalformed, fmt.Sprintf(format, args...))
}

// checkDocument applies the size, UTF-8 and depth limits to a JSON document before it is parsed.
func checkDocument(data []byte) error {
	if len(data) > MaxBodyBytes {
		return malformed("document is %d bytes, larger than the %d byte limit", len(data), MaxBodyBytes)
	}
	if !utf8.Valid(data) {
		return malformed("document is not valid UTF-8")
	}
	// Counted on the raw bytes, before the JSON is known to be valid: an invalid document fails in members
	// with encoding/json's message, and no parse of any depth starts on one deeper than the limit.
	if jsonscan.Depth(data) > MaxDepth {
		return malformed("JSON nesting deeper than %d", MaxDepth)
	}
	return nil
}

// ownDocument applies checkDocument's limits and returns a private copy of data. The exported parsers and
// UnmarshalJSON methods start with it: everything decoded aliases that one copy (as encoding/json's
// json.RawMessage values were copies), never the caller's buffer, and members below copies nothing more.
func ownDocument(data []byte) ([]byte, error) {
	if err := checkDocument(data); err != nil {
		return nil, err
	}
	return bytes.Clone(data), nil
}

// members reads a JSON object into its members, each kept as the exact bytes of its value. data must be
// payguard's own (see ownDocument): the values alias it.
//
// Member names are matched exactly later on (encoding/json matches struct fields case-insensitively,
// which would let `"To"` shadow `"to"` here while a JavaScript peer reads `"to"`). A repeated name keeps
// its last value, as JSON.parse does.
func members(data []byte, what string) (objectMembers, error) { return membersIn(nil, data, what) }

// membersIn is members with the list of members appended to buf (a caller's buffer, on its stack: reading
// an object then allocates nothing).
func membersIn(buf []jsonscan.Member, data []byte, what string) (objectMembers, error) {
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return objectMembers{}, malformed("%s: want a JSON object", what)
	}
	// jsonscan accepts exactly what encoding/json does. On a refusal encoding/json decodes again, for its
	// error message.
	var om objectMembers
	if ms, ok := jsonscan.AppendObject(buf, data); !ok {
		var all map[string]json.RawMessage
		if err := json.Unmarshal(data, &all); err != nil {
			return objectMembers{}, malformed("%s: %v", what, err)
		}
		if all == nil {
			all = map[string]json.RawMessage{}
		}
		om.large = &largeObject{all}
	} else if len(ms) <= smallObject {
		om.list = ms
	} else {
		om.large = &largeObject{make(map[string]json.RawMessage, len(ms))}
		for _, mb := range ms {
			om.large.m[mb.Name] = mb.Value
		}
	}
	for _, mb := range om.list {
		if holdsRuneError(mb.Name) {
			return objectMembers{}, malformed("%s: member name holds U+FFFD or an unpaired surrogate escape", what)
		}
	}
	for k := range om.largeMap() {
		if holdsRuneError(k) {
			return objectMembers{}, malformed("%s: member name holds U+FFFD or an unpaired surrogate escape", what)
		}
	}
	return om, nil
}

// holdsRuneError reports whether s holds U+FFFD or invalid UTF-8 (which Go decodes as U+FFFD): see str.
// ASCII, the case of every real member name and value, is answered without decoding runes.
func holdsRuneError(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return strings.ContainsRune(s[i:], utf8.RuneError)
		}
	}
	return false
}

// smallObject is the most members an object may have to be kept as a list (looked up by walking it);
// a larger one is kept as a map, so that a hostile object of thousands of members costs a map's lookups.
const smallObject = 64

// objectMembers is a decoded JSON object whose known members are taken out one by one; whatever is left
// becomes the Unknown map of the Go value.
//
// An object of up to smallObject members (every real one) is the list of its members in document order,
// with a bit per member taken: issue 36's profile found the map built per object, and the copy made per
// string value, to be most of decoding a challenge. The map and the list answer alike: a name's value is
// its last occurrence's, taking a name takes every occurrence, the rest is a map of the members not taken.
type objectMembers struct {
	list  []jsonscan.Member // the members, in document order (a small object)
	taken uint64            // bit i: list[i] was taken
	large *largeObject      // a larger object, or one only encoding/json read; nil for a small one
}

// largeObject holds the members of a large object by name. It is behind a pointer so that escape analysis
// (which does not tell one field from another) keeps a caller's member buffer on the stack when rest
// hands the map out.
type largeObject struct{ m map[string]json.RawMessage }

func (m *objectMembers) largeMap() map[string]json.RawMessage {
	if m.large == nil {
		return nil
	}
	return m.large.m
}

// get returns the value of the member named key, if present and not taken.
func (m *objectMembers) get(key string) (json.RawMessage, bool) {
	v, _, ok := m.find(key)
	return v, ok
}

// find is get with the list index of the value (-1 for a large object).
func (m *objectMembers) find(key string) (json.RawMessage, int, bool) {
	if m.large != nil {
		v, ok := m.large.m[key]
		return v, -1, ok
	}
	for i := len(m.list) - 1; i >= 0; i-- {
		if m.taken&(1<<i) == 0 && m.list[i].Name == key {
			return m.list[i].Value, i, true
		}
	}
	return nil, -1, false
}

// has reports whether the member named key is present and not taken.
func (m *objectMembers) has(key string) bool {
	_, _, ok := m.find(key)
	return ok
}

// take removes the member named key (every occurrence of it).
func (m *objectMembers) take(key string) {
	_, i, ok := m.find(key)
	if ok {
		m.takeAt(i, key)
	}
}

// takeAt removes the member named key found at i by find, with every occurrence of it: the ones after i
// were taken already (find returns the last one not taken, and a name is taken whole), so only the ones
// before i are looked at.
func (m *objectMembers) takeAt(i int, key string) {
	if m.large != nil {
		delete(m.large.m, key)
		return
	}
	m.taken |= 1 << i
	for j := range i {
		if m.list[j].Name == key {
			m.taken |= 1 << j
		}
	}
}

// document is the JSON document being decoded (its bytes, which member values alias) with, when it is
// small enough, the same bytes as one string: a plain string value (printable ASCII, no escapes: every
// address, network, amount and scheme) is then a substring of that text instead of a copy of its own.
type document struct {
	b    []byte
	text string
}

// maxSharedText bounds the documents whose string values share one text: a string keeps its whole
// document alive, and a 42-byte payTo held by the console's recent decisions or an Index record must not
// pin a 64 KiB document. Above it every string value is copied on its own, as before.
const maxSharedText = 2 << 10

// sharedText returns the document for b, with its text when b is small enough to share one.
func sharedText(b []byte) document {
	if len(b) > maxSharedText {
		return document{}
	}
	return document{b: b, text: string(b)}
}

// str returns the value of raw, a plain string token inside d's bytes, as a substring of d's text; plain
// says raw is one (jsonscan.Member.Plain), else it is checked. ok is false for any other raw (an escape, a
// non-ASCII byte, raw outside d, or d without a text): decode it.
func (d document) str(raw []byte, plain bool) (string, bool) {
	if d.text == "" {
		return "", false
	}
	c := raw
	if plain {
		c = raw[1 : len(raw)-1]
	} else if c, plain = jsonscan.PlainString(raw); !plain {
		return "", false
	}
	if len(c) == 0 {
		return "", true
	}
	// Where c starts in d.b, by address: raw is a sub-slice of d.b (members alias the document), so this
	// is c's offset; anything else falls outside [0, len(d.b)) and is refused. No pointer is made from
	// the number: the string is d.text's own bytes at that offset, the same bytes as c's.
	off := uintptr(unsafe.Pointer(unsafe.SliceData(c))) - uintptr(unsafe.Pointer(unsafe.SliceData(d.b)))
	if off >= uintptr(len(d.b)) || uintptr(len(c)) > uintptr(len(d.b))-off {
		return "", false
	}
	return d.text[off : off+uintptr(len(c))], true
}

func isNull(raw json.RawMessage) bool {
	return string(bytes.TrimSpace(raw)) == "null"
}

// str takes a string member. Absent leaves dst unchanged; any non-string value (null included) is an error.
func (m *objectMembers) str(key, what string, dst *string) error {
	return m.strIn(document{}, key, what, dst)
}

// strIn is str for an object inside doc: a plain string value is a substring of doc's text, when it has
// one. (doc is a parameter, not a field: escape analysis would move the caller's member buffer to the heap
// with the text otherwise.)
func (m *objectMembers) strIn(doc document, key, what string, dst *string) error {
	raw, at, ok := m.find(key)
	if !ok {
		return nil
	}
	if t := bytes.TrimSpace(raw); len(t) == 0 || t[0] != '"' {
		return malformed("%s.%s: want a string", what, key)
	}
	// A plain string (printable ASCII, no escapes) is its own bytes and holds no U+FFFD.
	if v, ok := doc.str(raw, at >= 0 && m.list[at].Plain); ok {
		*dst = v
		m.takeAt(at, key)
		return nil
	}
	v, ok := jsonscan.String(raw)
	if !ok {
		if err := json.Unmarshal(raw, &v); err != nil {
			return malformed("%s.%s: %v", what, key, err)
		}
	}
	// encoding/json turns a lone UTF-16 surrogate escape ("\ud800") into U+FFFD, where JavaScript keeps
	// it: the value we would re-encode is then not the one the peers see. No real field holds U+FFFD.
	if holdsRuneError(v) {
		return malformed("%s.%s: string holds U+FFFD or an unpaired surrogate escape", what, key)
	}
	*dst = v
	m.takeAt(at, key)
	return nil
}

// dropNulls removes the listed members when they are null, so that they read as absent. Only facilitator
// and settlement answers use it: their optional members are written as null by some implementations (a
// success with "errorReason": null), and refusing such an answer would turn a settled payment into an unknown
// outcome.
func (m *objectMembers) dropNulls(keys ...string) {
	for _, k := range keys {
		if raw, ok := m.get(k); ok && isNull(raw) {
			m.take(k)
		}
	}
}

// integer takes an integer member (no fraction, no exponent).
func (m *objectMembers) integer(key, what string, dst *int64) error {
	raw, at, ok := m.find(key)
	if !ok {
		return nil
	}
	if isNull(raw) {
		return malformed("%s.%s: want an integer, got null", what, key)
	}
	// A valid JSON number that ParseInt reads whole is what encoding/json decodes too; anything else (a
	// fraction, an exponent, out of range, not a number) goes to encoding/json for its verdict.
	if v, err := strconv.ParseInt(string(bytes.TrimSpace(raw)), 10, 64); err == nil {
		*dst = v
		m.takeAt(at, key)
		return nil
	}
	var v int64 // not dst: handing dst to encoding/json would move every caller's integer to the heap
	if err := json.Unmarshal(raw, &v); err != nil {
		return malformed("%s.%s: want an integer: %v", what, key, err)
	}
	*dst = v
	m.takeAt(at, key)
	return nil
}

// boolean takes a true/false member.
func (m *objectMembers) boolean(key, what string, dst *bool) error {
	raw, ok := m.get(key)
	if !ok {
		return nil
	}
	if isNull(raw) {
		return malformed("%s.%s: want a boolean, got null", what, key)
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		return malformed("%s.%s: want a boolean: %v", what, key, err)
	}
	m.take(key)
	return nil
}

// raw takes a member of any JSON type, verbatim.
func (m *objectMembers) raw(key string) json.RawMessage {
	raw, at, ok := m.find(key)
	if !ok {
		return nil
	}
	m.takeAt(at, key)
	return raw
}

// object takes a member that must be a JSON object, returning its bytes (nil when absent).
func (m *objectMembers) object(key, what string) (json.RawMessage, error) {
	raw, at, ok := m.find(key)
	if !ok {
		return nil, nil
	}
	if t := bytes.TrimSpace(raw); len(t) == 0 || t[0] != '{' {
		return nil, malformed("%s.%s: want a JSON object", what, key)
	}
	m.takeAt(at, key)
	return raw, nil
}

// rawMap takes a member that must be a JSON object and returns its members verbatim (an empty map for {}).
func (m *objectMembers) rawMap(key, what string) (map[string]json.RawMessage, error) {
	raw, err := m.object(key, what)
	if err != nil || raw == nil {
		return nil, err
	}
	var buf [16]jsonscan.Member
	inner, err := membersIn(buf[:0], raw, what+"."+key)
	if err != nil {
		return nil, err
	}
	if all := inner.rest(); all != nil {
		return all, nil
	}
	return map[string]json.RawMessage{}, nil
}

// rest returns the members not taken, or nil when there are none (so decoded values compare equal).
func (m *objectMembers) rest() map[string]json.RawMessage {
	if m.large != nil {
		if len(m.large.m) == 0 {
			return nil
		}
		return m.large.m
	}
	var out map[string]json.RawMessage
	for i, mb := range m.list {
		if m.taken&(1<<i) != 0 {
			continue
		}
		if out == nil {
			out = make(map[string]json.RawMessage, len(m.list)-bits.OnesCount64(m.taken))
		}
		out[mb.Name] = mb.Value // a repeated name: the last one's value, as a map made in order keeps
	}
	return out
}

// objectWriter writes a JSON object member by member: known members in the order the official SDKs emit
// them, then the Unknown members in name order. Values kept as json.RawMessage are written byte for byte.
//
// It appends to one byte slice and remembers the written names in a short list: every preflight result
// encodes the chosen requirement, and the earlier bytes.Buffer, per-member encoder and name map cost more
// than the rest of the result's encoding.
type objectWriter struct {
	buf   []byte
	start int        // where this object's '{' is in buf (a nested object appends to its parent's buffer)
	names [16]string // names written so far; objects here have a dozen members at most besides Unknown
	n     int
	more  []string // names past names' room (none of this package's objects has that many)
	err   error
}

func newObjectWriter() *objectWriter { return newObjectWriterOn(make([]byte, 0, 256)) }

// newObjectWriterOn writes an object at the end of dst: a member holding one of this package's objects is
// written into its parent's buffer (appendRequirement, ResourceInfo.appendJSON), not into a buffer of its own
// copied and re-validated after (issue 36: the proxy encodes the narrowed challenge of every allowed 402).
func newObjectWriterOn(dst []byte) *objectWriter {
	w := &objectWriter{buf: append(dst, '{'), start: len(dst)}
	return w
}

func (w *objectWriter) key(k string) {
	if len(w.buf) > w.start+1 {
		w.buf = append(w.buf, ',')
	}
	w.buf = appendString(w.buf, k)
	w.buf = append(w.buf, ':')
	if w.n < len(w.names) {
		w.names[w.n] = k
		w.n++
	} else {
		w.more = append(w.more, k)
	}
}

func (w *objectWriter) written(k string) bool {
	return slices.Contains(w.names[:w.n], k) || slices.Contains(w.more, k)
}

// object writes a member whose value is one of this package's objects, appended in place by appendTo; the
// writers build only valid JSON (raw checks what they copy), so it is not scanned again.
func (w *objectWriter) object(k string, appendTo func([]byte) ([]byte, error)) {
	if w.err != nil {
		return
	}
	w.key(k)
	b, err := appendTo(w.buf)
	if err != nil {
		w.err = fmt.Errorf("x402: encode member %q: %w", k, err)
		return
	}
	w.buf = b
}

// raw writes a member whose value is already JSON. It checks the bytes so that a hand-built value can
// never produce an invalid document.
func (w *objectWriter) raw(k string, v json.RawMessage) {
	if w.err != nil {
		return
	}
	if !jsonscan.Valid(v) {
		w.err = fmt.Errorf("x402: encode member %q: value is not valid JSON", k)
		return
	}
	w.key(k)
	w.buf = append(w.buf, v...)
}

// str writes a string member.
func (w *objectWriter) str(k, v string) {
	w.key(k)
	w.buf = appendString(w.buf, v)
}

// value writes any Go value with encoding/json (no HTML escaping, like JSON.stringify). Integers and
// booleans, the only scalars the wire types write this way, are formatted directly, as encoding/json does.
func (w *objectWriter) value(k string, v any) {
	if w.err != nil {
		return
	}
	switch v := v.(type) {
	case int:
		w.key(k)
		w.buf = strconv.AppendInt(w.buf, int64(v), 10)
		return
	case int64:
		w.key(k)
		w.buf = strconv.AppendInt(w.buf, v, 10)
		return
	case bool:
		w.key(k)
		w.buf = strconv.AppendBool(w.buf, v)
		return
	}
	b, err := marshalNoEscape(v)
	if err != nil {
		w.err = fmt.Errorf("x402: encode member %q: %w", k, err)
		return
	}
	w.key(k)
	w.buf = append(w.buf, b...)
}

// rawMap writes a member whose value is an object of raw members (extensions).
func (w *objectWriter) rawMap(k string, m map[string]json.RawMessage) {
	if w.err != nil {
		return
	}
	inner := newObjectWriter()
	inner.unknown(m)
	b, err := inner.finish()
	if err != nil {
		w.err = fmt.Errorf("x402: encode member %q: %w", k, err)
		return
	}
	w.key(k)
	w.buf = append(w.buf, b...)
}

// unknown writes the members not written yet, in name order; empty values are skipped.
func (w *objectWriter) unknown(m map[string]json.RawMessage) {
	if len(m) == 0 {
		return
	}
	keys := make([]string, 0, len(m))
	for k, v := range m {
		if !w.written(k) && len(v) > 0 {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		w.raw(k, m[k])
	}
}

// finish closes the object and returns the buffer it was written to (its parent's bytes before it, for a
// nested one).
func (w *objectWriter) finish() ([]byte, error) {
	if w.err != nil {
		return nil, w.err
	}
	return append(w.buf, '}'), nil
}

// appendString appends s as a JSON string, as marshalNoEscape writes it. Strings of printable ASCII
// without '"' or '\\' (every address, network, amount and scheme) need no escaping and are copied; any
// other string goes through encoding/json, so the escaping rules stay encoding/json's.
func appendString(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x80 || c == '"' || c == '\\' {
			b, _ := marshalNoEscape(s) // a string always encodes
			return append(dst, b...)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}

// marshalNoEscape is json.Marshal without HTML escaping: JSON.stringify writes '&', '<' and '>' as they
// are, and a re-encoded challenge should read the same as the seller's. The types of this package are
// written by their own MarshalJSON, whose output is used as is (encoding/json would re-compact it and so
// touch the bytes of the verbatim members).
func marshalNoEscape(v any) ([]byte, error) {
	if m, ok := v.(json.Marshaler); ok && isOwnType(v) {
		b, err := m.MarshalJSON()
		if err != nil {
			return nil, err
		}
		if !jsonscan.Valid(b) {
			return nil, fmt.Errorf("x402: %T.MarshalJSON wrote invalid JSON", v)
		}
		return b, nil
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte{'\n'}), nil
}

// isOwnType reports whether v is one of this package's wire types (value or non-nil pointer).
func isOwnType(v any) bool {
	switch v := v.(type) {
	case PaymentRequired, Requirement, ResourceInfo, PaymentPayload, SettleResponse, VerifyResponse, FacilitatorRequest:
		return true
	case *PaymentRequired:
		return v != nil
	case *Requirement:
		return v != nil
	case *ResourceInfo:
		return v != nil
	case *PaymentPayload:
		return v != nil
	case *SettleResponse:
		return v != nil
	case *VerifyResponse:
		return v != nil
	case *FacilitatorRequest:
		return v != nil
	}
	return false
}
