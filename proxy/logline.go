package proxy

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/payguard/payguard/internal/logout"
)

// LineWriter is what a log handler offers when it is slog's JSONHandler without attributes, groups,
// ReplaceAttr or AddSource writing into one ordered stream (internal/logout's Handler): WriteLine adds a
// whole line, encoded as that handler would encode it, to the same stream. The decision line is then written
// by hand (appendDecisionLine), the same bytes without slog's per-attribute work (issue 36: the line was
// 5% of the proxy's CPU per decided 402). A handler without it gets the line through slog.
type LineWriter interface {
	WriteLine(line []byte) error
}

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
func writeDecisionLine(w LineWriter, now time.Time, l *decisionLine) (ok bool) {
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
// builds: {"time":…,"level":"INFO","msg":"decision", then each field, and a newline. Strings are escaped
// as slog escapes them (appendJSONString), the reasons as encoding/json writes a []string (slog.Any),
// latency_ms as encoding/json writes a float64. TestDecisionLineAsSlogWritesIt holds it to slog's bytes.
func appendDecisionLine(b []byte, now time.Time, l *decisionLine) ([]byte, bool) {
	now = now.Round(0)
	lat := math.Abs(l.latencyMs)
	if y := now.Year(); y < 0 || y >= 10000 || math.IsNaN(l.latencyMs) || lat != 0 && (lat < 1e-6 || lat >= 1e21) {
		return b, false // slog writes an error or an exponent there: left to slog
	}
	b = append(b, `{"time":"`...)
	b = now.AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","level":"INFO","msg":"decision","stage":`...)
	b = appendSlogString(b, l.stage)
	b = append(b, `,"decision":`...)
	b = appendSlogString(b, l.decision)
	b = append(b, `,"agent":`...)
	b = appendSlogString(b, l.agent)
	b = append(b, `,"shadow":`...)
	b = appendSlogString(b, l.shadow)
	b = append(b, `,"reasons":`...)
	b = appendJSONStrings(b, l.reasons)
	b = append(b, `,"reason_class":`...)
	b = appendSlogString(b, l.class)
	b = append(b, `,"method":`...)
	b = appendSlogString(b, l.method)
	b = append(b, `,"host":`...)
	b = appendSlogString(b, l.host)
	b = append(b, `,"path":`...)
	b = appendSlogString(b, l.path)
	b = append(b, `,"amount_usd":`...)
	b = appendSlogString(b, l.amount)
	b = append(b, `,"pay_to":`...)
	b = appendSlogString(b, l.payTo)
	b = append(b, `,"amount_atomic":`...)
	b = appendSlogString(b, l.atomic)
	b = append(b, `,"network":`...)
	b = appendSlogString(b, l.network)
	b = append(b, `,"scheme":`...)
	b = appendSlogString(b, l.scheme)
	b = append(b, `,"receipt_id":`...)
	b = appendSlogString(b, l.receipt)
	b = append(b, `,"hold_id":`...)
	b = appendSlogString(b, l.holdID)
	b = append(b, `,"latency_ms":`...)
	b = strconv.AppendFloat(b, l.latencyMs, 'f', -1, 64) // encoding/json's format in this range
	return append(b, "}\n"...), true
}

// appendSlogString appends s quoted as slog's JSON handler quotes a string value (logout.AppendString).
func appendSlogString(b []byte, s string) []byte { return logout.AppendString(b, s) }

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
