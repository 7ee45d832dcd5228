// Package logout is the output of payguard proxy's and serve's JSON log: lines gathered in memory and
// written to the process's stderr in one write(2) at most FlushDelay after the first of them, at once when
// MaxPending bytes wait, when a line at WARN or above is logged, and when the process stops (Close).
//
// Issue 36: with a write(2) per decision line, writing the log was a tenth of the proxy's CPU per decided
// 402. What buffering costs: a crash (SIGKILL, a panic, the machine) loses the INFO lines of its last
// FlushDelay at most (docs/SPEC.md, "Logging"); WARN and ERROR lines are written at once, each with every
// line before it. The journal, not the log, is the durable record of decisions.
package logout

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"time"
)

// FlushDelay bounds how long a line waits in memory before it is written.
const FlushDelay = 50 * time.Millisecond

// MaxPending is how many bytes may wait before they are written at once.
const MaxPending = 64 << 10

// Writer buffers lines for out. Every Write is kept whole and in order; Flush and Close write what waits.
// It is safe for concurrent use.
type Writer struct {
	out   io.Writer
	delay time.Duration
	timer *time.Timer

	// flushMu is held while a flush writes to out, so that flushes reach out in the order they took the
	// pending bytes, and writes after Close go behind the last flush.
	flushMu sync.Mutex
	mu      sync.Mutex // guards the fields below
	pending []byte
	spare   []byte // the previous flush's buffer, reused
	armed   bool   // the timer will flush what is pending
	closed  bool
}

// NewWriter returns a Writer that writes to out at most delay after a line arrives.
func NewWriter(out io.Writer, delay time.Duration) *Writer {
	w := &Writer{out: out, delay: delay}
	w.timer = time.AfterFunc(delay, func() { w.Flush() })
	w.timer.Stop()
	return w
}

// Write adds p (one or more whole lines) to what waits. Once the Writer is closed it writes p at once.
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		w.flushMu.Lock()
		defer w.flushMu.Unlock()
		return w.out.Write(p)
	}
	w.pending = append(w.pending, p...)
	full := len(w.pending) >= MaxPending
	if !full && !w.armed {
		w.armed = true
		w.timer.Reset(w.delay)
	}
	w.mu.Unlock()
	if full {
		return len(p), w.Flush()
	}
	return len(p), nil
}

// Flush writes what waits, in one write.
func (w *Writer) Flush() error {
	w.flushMu.Lock()
	defer w.flushMu.Unlock()
	return w.flushLocked()
}

// flushLocked is Flush with flushMu held.
func (w *Writer) flushLocked() error {
	w.mu.Lock()
	b := w.pending
	w.pending, w.spare = w.spare[:0], nil
	w.armed = false // a timer still due finds nothing, or flushes the next lines early
	w.mu.Unlock()
	if len(b) == 0 {
		w.keep(b)
		return nil
	}
	_, err := w.out.Write(b)
	w.keep(b)
	return err
}

// keep keeps b for the next flush, unless it grew past what is worth keeping.
func (w *Writer) keep(b []byte) {
	if cap(b) > 2*MaxPending {
		return
	}
	w.mu.Lock()
	if w.spare == nil {
		w.spare = b[:0]
	}
	w.mu.Unlock()
}

// Close writes what waits; later writes go straight to out. It may be called more than once. flushMu is
// held from before the Writer is marked closed until what waited is written: a write that finds it closed
// goes straight to out, and must not overtake the lines written before it (attack2: it could, between
// the mark and the flush).
func (w *Writer) Close() error {
	w.flushMu.Lock()
	defer w.flushMu.Unlock()
	w.mu.Lock()
	w.closed = true
	w.timer.Stop()
	w.mu.Unlock()
	return w.flushLocked()
}

// Handler is slog's JSON handler writing to a Writer: it flushes after each record at WARN or above, and it
// implements LineWriter (a handler without attributes or groups writing one ordered stream), so
// that the proxy writes its decision lines, and serve its request lines, into the same stream without
// slog's per-attribute work.
type Handler struct {
	json *slog.JSONHandler
	w    *Writer
}

// NewHandler is slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level}) with the flushing above. The
// options are the level alone: LineWriter's lines are encoded as a handler without ReplaceAttr or
// AddSource writes them.
func NewHandler(w *Writer, level slog.Leveler) *Handler {
	return &Handler{json: slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level}), w: w}
}

func (h *Handler) Enabled(ctx context.Context, l slog.Level) bool { return h.json.Enabled(ctx, l) }

func (h *Handler) Handle(ctx context.Context, r slog.Record) error {
	return flushAfter(h.json.Handle(ctx, r), r.Level, h.w)
}

// WithAttrs and WithGroup return handlers that are not LineWriters: their records carry more than a
// decision line holds.
func (h *Handler) WithAttrs(as []slog.Attr) slog.Handler {
	return &derived{h.json.WithAttrs(as), h.w}
}

func (h *Handler) WithGroup(name string) slog.Handler { return &derived{h.json.WithGroup(name), h.w} }

// WriteLine adds one line encoded as this handler would encode its record (LineWriter).
func (h *Handler) WriteLine(line []byte) error {
	_, err := h.w.Write(line)
	return err
}

// derived is a Handler with attributes or a group.
type derived struct {
	slog.Handler
	w *Writer
}

func (d *derived) Handle(ctx context.Context, r slog.Record) error {
	return flushAfter(d.Handler.Handle(ctx, r), r.Level, d.w)
}

func (d *derived) WithAttrs(as []slog.Attr) slog.Handler {
	return &derived{d.Handler.WithAttrs(as), d.w}
}

func (d *derived) WithGroup(name string) slog.Handler {
	return &derived{d.Handler.WithGroup(name), d.w}
}

// flushAfter flushes w after a record at WARN or above, which is written at once.
func flushAfter(err error, l slog.Level, w *Writer) error {
	if l >= slog.LevelWarn {
		if ferr := w.Flush(); err == nil {
			err = ferr
		}
	}
	return err
}
