package server

import (
	"context"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/payguard/payguard/internal/logout"
)

// lineWriter is a log handler that takes whole lines encoded as slog's JSON handler without attributes,
// groups, ReplaceAttr or AddSource would encode its record (internal/logout's Handler, the one `payguard
// serve` logs through). The request line is then written by hand (appendRequestLine): the same bytes
// without slog's per-attribute work (issue 36: 4–5 % of serve's CPU per preflight). Another handler gets
// the line through slog.
type lineWriter interface {
	WriteLine(line []byte) error
}

// requestLine is the one log line per request's fields (the middleware's).
type requestLine struct {
	method, path                     string
	status                           int
	bytes                            int64
	latencyMs                        float64
	errCode, payment, decision, rcpt string
}

// requestFields bounds the attributes of a request line.
const requestFields = 9

// attrs are the line's attributes as slog gets them, in dst (on the caller's stack: LogAttrs copies them).
// appendRequestLine writes the same; TestRequestLineAsSlogWritesIt compares the two.
func (l *requestLine) attrs(dst *[requestFields]slog.Attr) []slog.Attr {
	as := append(dst[:0],
		slog.String("method", l.method), slog.String("path", l.path),
		slog.Int("status", l.status), slog.Int64("bytes", l.bytes),
		slog.Float64("latency_ms", l.latencyMs),
	)
	if l.errCode != "" {
		as = append(as, slog.String("error", l.errCode))
	}
	if l.payment != "" {
		as = append(as, slog.String("payment", l.payment))
	}
	if l.decision != "" {
		as = append(as, slog.String("decision", l.decision), slog.String("receipt_id", l.rcpt))
	}
	return as
}

// log writes the line at INFO: by hand when the handler takes lines, else through slog.
func (l *requestLine) log(ctx context.Context, log *slog.Logger) {
	if !log.Enabled(ctx, slog.LevelInfo) {
		return
	}
	if lw, ok := log.Handler().(lineWriter); ok && writeRequestLine(lw, time.Now(), l) {
		return
	}
	var room [requestFields]slog.Attr
	log.LogAttrs(ctx, slog.LevelInfo, "request", l.attrs(&room)...)
}

// lineBuffers hold the buffers request lines are encoded in (WriteLine copies the line).
var lineBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

// writeRequestLine encodes l at time now and hands it to w; ok is false when appendRequestLine leaves the
// line to slog.
func writeRequestLine(w lineWriter, now time.Time, l *requestLine) (ok bool) {
	bp := lineBuffers.Get().(*[]byte)
	line, ok := appendRequestLine((*bp)[:0], now, l)
	if ok {
		w.WriteLine(line) // an error is the handler's to report, as slog ignores Handle's
	}
	if cap(line) <= 8<<10 { // a line grown by a huge path is not kept
		*bp = line[:0]
		lineBuffers.Put(bp)
	}
	return ok
}

// appendRequestLine appends the request line as slog.NewJSONHandler writes the record of l.attrs:
// {"time":…,"level":"INFO","msg":"request", the fields, and a newline. Strings are quoted as slog quotes
// them (logout.AppendString), integers as strconv writes them, latency_ms as encoding/json writes a float64
// in the range it writes without an exponent. ok is false for a time or latency slog would write otherwise.
func appendRequestLine(b []byte, now time.Time, l *requestLine) ([]byte, bool) {
	now = now.Round(0)
	if y := now.Year(); y < 0 || y >= 10000 || !(l.latencyMs == 0 || l.latencyMs >= 1e-6 && l.latencyMs < 1e21) {
		return b, false
	}
	b = append(b, `{"time":"`...)
	b = now.AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","level":"INFO","msg":"request","method":`...)
	b = logout.AppendString(b, l.method)
	b = append(b, `,"path":`...)
	b = logout.AppendString(b, l.path)
	b = append(b, `,"status":`...)
	b = strconv.AppendInt(b, int64(l.status), 10)
	b = append(b, `,"bytes":`...)
	b = strconv.AppendInt(b, l.bytes, 10)
	b = append(b, `,"latency_ms":`...)
	b = strconv.AppendFloat(b, l.latencyMs, 'f', -1, 64)
	if l.errCode != "" {
		b = append(b, `,"error":`...)
		b = logout.AppendString(b, l.errCode)
	}
	if l.payment != "" {
		b = append(b, `,"payment":`...)
		b = logout.AppendString(b, l.payment)
	}
	if l.decision != "" {
		b = append(b, `,"decision":`...)
		b = logout.AppendString(b, l.decision)
		b = append(b, `,"receipt_id":`...)
		b = logout.AppendString(b, l.rcpt)
	}
	return append(b, "}\n"...), true
}
