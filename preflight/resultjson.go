package preflight

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"

	"github.com/payguard/payguard/x402/jsonscan"
)

// appendResultJSON appends what json.Marshal writes for r: the signing payload (and so the answer) of every
// decision, written without encoding/json's reflective walk of the struct, which was most of its cost. The
// parts that are rare or not this package's are encoded as encoding/json encodes them (json.Marshal of that
// one value: the sanctions matches when there are some, the Index's payee and price evidence), and the chosen
// option's own MarshalJSON output goes through json.Compact as encoding/json compacts it. ok is false when
// that output has a byte encoding/json would escape (<, >, &, U+2028, U+2029) or does not compact; the
// caller then encodes r with encoding/json, which does not guess. TestResultJSONIsMarshal holds it to
// json.Marshal, and fails when Result or what it holds gains a JSON member this does not write.
func appendResultJSON(dst []byte, r *Result) (out []byte, ok bool) {
	dst = append(dst, `{"decision":`...)
	dst = appendJSONString(dst, r.Decision)
	dst = append(dst, `,"reasons":`...)
	dst = appendJSONStrings(dst, r.Reasons)
	dst = append(dst, `,"chosen_option":`...)
	if r.ChosenOption == nil {
		dst = append(dst, "null"...)
	} else if dst, ok = appendMarshaler(dst, r.ChosenOption); !ok {
		return nil, false
	}
	dst = append(dst, `,"options_evaluated":`...)
	dst = strconv.AppendInt(dst, int64(r.OptionsEvaluated), 10)
	dst = append(dst, `,"payee":`...)
	if p := r.Payee; p == nil {
		dst = append(dst, "null"...)
	} else {
		dst = append(dst, `{"pay_to":`...)
		dst = appendJSONString(dst, p.PayTo)
		dst = append(dst, `,"network":`...)
		dst = appendJSONString(dst, p.Network)
		dst = append(dst, `,"merchant_domain":`...)
		dst = appendJSONString(dst, p.MerchantDomain)
		dst = append(dst, `,"merchant_name":`...)
		dst = appendJSONString(dst, p.MerchantName)
		s := &p.Sanctions
		dst = append(dst, `,"sanctions":{"screened":`...)
		dst = strconv.AppendBool(dst, s.Screened)
		dst = append(dst, `,"status":`...)
		dst = appendJSONString(dst, s.Status)
		dst = append(dst, `,"matches":`...)
		switch {
		case s.Matches == nil:
			dst = append(dst, "null"...)
		case len(s.Matches) == 0:
			dst = append(dst, "[]"...)
		default:
			if dst, ok = appendMarshal(dst, s.Matches); !ok {
				return nil, false
			}
		}
		if s.Note != "" {
			dst = append(dst, `,"note":`...)
			dst = appendJSONString(dst, s.Note)
		}
		d := &p.Domain
		dst = append(dst, `},"domain":{"checked":`...)
		dst = strconv.AppendBool(dst, d.Checked)
		dst = append(dst, `,"valid":`...)
		dst = appendBoolPtr(dst, d.Valid)
		dst = append(dst, `,"registered_at":`...)
		if d.RegisteredAt == nil {
			dst = append(dst, "null"...)
		} else {
			// time.Time's own JSON (RFC 3339, quoted), which encoding/json writes as it is.
			b, err := d.RegisteredAt.MarshalJSON()
			if err != nil || needsHTMLEscape(b) {
				return nil, false
			}
			dst = append(dst, b...)
		}
		dst = append(dst, `,"age_days":`...)
		if d.AgeDays == nil {
			dst = append(dst, "null"...)
		} else {
			dst = strconv.AppendInt(dst, int64(*d.AgeDays), 10)
		}
		dst = append(dst, `,"has_a":`...)
		dst = appendBoolPtr(dst, d.HasA)
		dst = append(dst, `,"has_mx":`...)
		dst = appendBoolPtr(dst, d.HasMX)
		if d.Note != "" {
			dst = append(dst, `,"note":`...)
			dst = appendJSONString(dst, d.Note)
		}
		dst = append(dst, "}}"...)
	}
	rc := &r.Receipt
	dst = append(dst, `,"receipt":{"id":`...)
	dst = appendJSONString(dst, rc.ID)
	dst = append(dst, `,"ts":`...)
	dst = appendJSONString(dst, rc.TS)
	dst = append(dst, `,"input_sha256":`...)
	dst = appendJSONString(dst, rc.InputSHA256)
	dst = append(dst, `,"decision":`...)
	dst = appendJSONString(dst, rc.Decision)
	if rc.JWS != "" {
		dst = append(dst, `,"jws":`...)
		dst = appendJSONString(dst, rc.JWS)
	}
	dst = append(dst, `},"data_as_of":`...)
	dst = appendJSONString(dst, r.DataAsOf)
	if r.IndexEvidence != nil {
		dst = append(dst, `,"index_evidence":`...)
		if dst, ok = appendIndexEvidence(dst, r.IndexEvidence); !ok {
			return nil, false
		}
	}
	return append(dst, '}'), true
}

// appendIndexEvidence appends what json.Marshal writes for ev. Every decision with an Index carries it (its
// reflective encoding was ~2 % of serve's CPU per trial preflight); the payee and price evidence, present
// only when the Index has observations of the endpoint, go through json.Marshal.
func appendIndexEvidence(dst []byte, ev *IndexEvidence) (out []byte, ok bool) {
	dst = append(dst, `{"status":`...)
	dst = appendJSONString(dst, ev.Status)
	if ev.URL != "" {
		dst = append(dst, `,"url":`...)
		dst = appendJSONString(dst, ev.URL)
	}
	if ev.Method != "" {
		dst = append(dst, `,"method":`...)
		dst = appendJSONString(dst, ev.Method)
	}
	dst = append(dst, `,"observations":`...)
	dst = strconv.AppendInt(dst, int64(ev.Observations), 10)
	dst = append(dst, `,"data_as_of":`...)
	dst = appendJSONString(dst, ev.DataAsOf)
	if ev.PayTo != nil {
		dst = append(dst, `,"payto":`...)
		if dst, ok = appendMarshal(dst, ev.PayTo); !ok {
			return nil, false
		}
	}
	if ev.Price != nil {
		dst = append(dst, `,"price":`...)
		if dst, ok = appendMarshal(dst, ev.Price); !ok {
			return nil, false
		}
	}
	dst = append(dst, `,"consecutive_failed_probes":`...)
	dst = strconv.AppendInt(dst, int64(ev.ConsecutiveFailedProbes), 10)
	if ev.LastProbeError != "" {
		dst = append(dst, `,"last_probe_error":`...)
		dst = appendJSONString(dst, ev.LastProbeError)
	}
	if ev.Note != "" {
		dst = append(dst, `,"note":`...)
		dst = appendJSONString(dst, ev.Note)
	}
	return append(dst, '}'), true
}

// appendMarshaler appends what encoding/json writes for a json.Marshaler: its output, compacted. ok is
// false when that output is not valid JSON (json.Marshal fails then) or has a byte json.Marshal would escape
// in it (needsHTMLEscape), which is left to encoding/json.
func appendMarshaler(dst []byte, m json.Marshaler) ([]byte, bool) {
	raw, err := m.MarshalJSON()
	if err != nil {
		return nil, false
	}
	if compactPlain(raw) && jsonscan.Valid(raw) {
		// What encoding/json's compaction gives: no space to drop, nothing to escape (a third of the cost).
		return append(dst, raw...), true
	}
	at := len(dst)
	buf := bytes.NewBuffer(dst) // appends after dst's bytes, into its spare capacity
	if json.Compact(buf, raw) != nil {
		return nil, false
	}
	dst = buf.Bytes()
	if needsHTMLEscape(dst[at:]) {
		return nil, false
	}
	return dst, true
}

// appendMarshal appends json.Marshal(v).
func appendMarshal(dst []byte, v any) ([]byte, bool) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, false
	}
	return append(dst, b...), true
}

func appendBoolPtr(dst []byte, b *bool) []byte {
	if b == nil {
		return append(dst, "null"...)
	}
	return strconv.AppendBool(dst, *b)
}

// appendJSONStrings appends a []string as encoding/json does (nil is null).
func appendJSONStrings(dst []byte, ss []string) []byte {
	if ss == nil {
		return append(dst, "null"...)
	}
	dst = append(dst, '[')
	for i, s := range ss {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendJSONString(dst, s)
	}
	return append(dst, ']')
}

// appendJSONString appends s as encoding/json writes a string (HTML-escaped, as json.Marshal does). A string
// of printable ASCII other than " \ < > &, and valid UTF-8 other than U+2028 and U+2029, is written as it
// is; any other string, rare here, is handed to encoding/json.
func appendJSONString(dst []byte, s string) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
				return appendMarshaledString(dst, s)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || r == '\u2028' || r == '\u2029' {
			return appendMarshaledString(dst, s)
		}
		i += size
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}

func appendMarshaledString(dst []byte, s string) []byte {
	b, _ := json.Marshal(s) // a string always encodes
	return append(dst, b...)
}

// compactPlain reports whether JSON text has no space outside its strings and nothing json.Marshal would
// escape in a Marshaler's output (needsHTMLEscape): valid such text is its own compaction.
func compactPlain(b []byte) bool {
	in := false
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case in && c == '\\':
			i++ // the escaped byte cannot end the string
		case c == '"':
			in = !in
		case !in && (c == ' ' || c == '\t' || c == '\n' || c == '\r'):
			return false
		case c == '<' || c == '>' || c == '&':
			return false
		case c == 0xE2 && i+2 < len(b) && b[i+1] == 0x80 && (b[i+2] == 0xA8 || b[i+2] == 0xA9):
			return false
		}
	}
	return true
}

// needsHTMLEscape reports whether JSON text has a byte sequence json.Marshal would escape in a Marshaler's
// output: <, >, &, U+2028 or U+2029.
func needsHTMLEscape(b []byte) bool {
	for i, c := range b {
		switch c {
		case '<', '>', '&':
			return true
		case 0xE2:
			if i+2 < len(b) && b[i+1] == 0x80 && (b[i+2] == 0xA8 || b[i+2] == 0xA9) {
				return true
			}
		}
	}
	return false
}
