package server

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/payguard/payguard/internal/logout"
)

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
	if lw, ok := log.Handler().(logout.LineWriter); ok && writeRequestLine(lw, time.Now(), l) {
		return
	}
	var room [requestFields]slog.Attr
	log.LogAttrs(ctx, slog.LevelInfo, "request", l.attrs(&room)...)
}

// lineBuffers hold the buffers request lines are encoded in (WriteLine copies the line).
var lineBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

// writeRequestLine encodes l at time now and hands it to w; ok is false when appendRequestLine leaves the
// line to slog.
func writeRequestLine(w logout.LineWriter, now time.Time, l *requestLine) (ok bool) {
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
// {"time":…,"level":"INFO","msg":"request", the fields, and a newline (internal/logout's line encoding). ok
// is false for a time or latency slog would write otherwise. TestRequestLineAsSlogWritesIt holds it to
// slog's bytes.
func appendRequestLine(b []byte, now time.Time, l *requestLine) ([]byte, bool) {
	line, ok := logout.AppendHead(b, now, "request")
	if !ok {
		return b, false
	}
	line = logout.AppendStringAttr(line, "method", l.method)
	line = logout.AppendStringAttr(line, "path", l.path)
	line = logout.AppendIntAttr(line, "status", int64(l.status))
	line = logout.AppendIntAttr(line, "bytes", l.bytes)
	if line, ok = logout.AppendFloatAttr(line, "latency_ms", l.latencyMs); !ok {
		return b, false
	}
	if l.errCode != "" {
		line = logout.AppendStringAttr(line, "error", l.errCode)
	}
	if l.payment != "" {
		line = logout.AppendStringAttr(line, "payment", l.payment)
	}
	if l.decision != "" {
		line = logout.AppendStringAttr(line, "decision", l.decision)
		line = logout.AppendStringAttr(line, "receipt_id", l.rcpt)
	}
	return logout.EndLine(line), true
}
