package proxy

import (
	"bytes"
	"encoding/json"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/payguard/payguard/internal/logout"
)

// decisionLine is the canonical decision line's fields, in the order logDecision writes them.
type decisionLine struct {
	stage, decision, agent, shadow string
	reasons                        []string
	class, method, host, path      string
	amount, payTo, atomic          string
	network, scheme                string
	receipt, holdID                string
	latencyMs                      float64
}

// linePool holds the buffers decision lines are encoded in (WriteLine copies the line).
var linePool = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// writeDecisionLine encodes l as slog's JSON handler would, at time now, and hands it to w. ok is false
// when the line is one appendDecisionLine does not write (a time or latency slog would write otherwise):
// the caller logs it through slog.
func writeDecisionLine(w logout.LineWriter, now time.Time, l *decisionLine) (ok bool) {
	bp := linePool.Get().(*[]byte)
	line, ok := appendDecisionLine((*bp)[:0], now, l)
	if ok {
		w.WriteLine(line) // an error is the handler's own to report, as slog ignores Handle's
	}
	if cap(line) <= 16<<10 { // a line grown by a huge URL is not kept
		*bp = line[:0]
		linePool.Put(bp)
	}
	return ok
}

// appendDecisionLine appends the decision line as slog.NewJSONHandler writes the record logDecision
// builds: {"time":…,"level":"INFO","msg":"decision", then each field, and a newline. Strings are quoted as
// slog quotes them (internal/logout), the reasons as encoding/json writes a []string (slog.Any),
// latency_ms as encoding/json writes a float64. ok is false for a time or latency slog would write
// otherwise. TestDecisionLineAsSlogWritesIt holds it to slog's bytes. The keys are written as the literal
// bytes logout.AppendKey makes of them (plain ASCII names: quoted as they are), not scanned for escapes
// on every line (issue 36).
func appendDecisionLine(b []byte, now time.Time, l *decisionLine) ([]byte, bool) {
	line, ok := logout.AppendHead(b, now, "decision")
	if !ok {
		return b, false
	}
	line = logout.AppendString(append(line, `,"stage":`...), l.stage)
	line = logout.AppendString(append(line, `,"decision":`...), l.decision)
	line = logout.AppendString(append(line, `,"agent":`...), l.agent)
	line = logout.AppendString(append(line, `,"shadow":`...), l.shadow)
	line = appendJSONStrings(append(line, `,"reasons":`...), l.reasons)
	line = logout.AppendString(append(line, `,"reason_class":`...), l.class)
	line = logout.AppendString(append(line, `,"method":`...), l.method)
	line = logout.AppendString(append(line, `,"host":`...), l.host)
	line = logout.AppendString(append(line, `,"path":`...), l.path)
	line = logout.AppendString(append(line, `,"amount_usd":`...), l.amount)
	line = logout.AppendString(append(line, `,"pay_to":`...), l.payTo)
	line = logout.AppendString(append(line, `,"amount_atomic":`...), l.atomic)
	line = logout.AppendString(append(line, `,"network":`...), l.network)
	line = logout.AppendString(append(line, `,"scheme":`...), l.scheme)
	line = logout.AppendString(append(line, `,"receipt_id":`...), l.receipt)
	line = logout.AppendString(append(line, `,"hold_id":`...), l.holdID)
	if line, ok = logout.AppendFloatAttr(line, "latency_ms", l.latencyMs); !ok {
		return b, false
	}
	return logout.EndLine(line), true
}

// appendJSONStrings appends ss as encoding/json encodes a []string without HTML escaping (slog.Any's
// encoding): null for nil. A string of printable ASCII without '"' or '\\' (every reason payguard writes
// about an ordinary request) is copied; any other goes through encoding/json, whose escapes (\b, \f) are
// not slog's.
func appendJSONStrings(b []byte, ss []string) []byte {
	if ss == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		if plainASCII(s) {
			b = append(append(append(b, '"'), s...), '"')
			continue
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		enc.Encode(s) // a string always encodes
		b = append(b, bytes.TrimSuffix(buf.Bytes(), []byte{'\n'})...)
	}
	return append(b, ']')
}

func plainASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}
