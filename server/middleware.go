package server

import (
	"bufio"
	"errors"
	"net"
	"net/http"
	"time"

	"github.com/payguard/payguard/server/core"
)

// recorder remembers what a handler answered, for the one log line per request.
type recorder struct {
	http.ResponseWriter
	status   int
	bytes    int64
	errCode  string
	payment  string // "trial", "paid", ""
	decision string
	receipt  string
	deadline bool // the body's read deadline is set (core.BodyDeadline)
}

// BodyDeadlineSet says the middleware has set the request body's read deadline (core.BodyDeadline).
func (r *recorder) BodyDeadlineSet() bool { return r.deadline }

func (r *recorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	n, err := r.ResponseWriter.Write(b)
	r.bytes += int64(n)
	return n, err
}

// Unwrap lets http.ResponseController reach the connection (read deadlines, flushing).
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// Flush keeps streaming handlers (MCP's event streams) working behind the recorder.
func (r *recorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Hijack is passed through for handlers that need the connection.
func (r *recorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	if h, ok := r.ResponseWriter.(http.Hijacker); ok {
		return h.Hijack()
	}
	return nil, nil, errors.New("server: hijacking not supported")
}

// middleware recovers panics (500 internal_error) and logs one line per request: method, path, status,
// size, latency, and for paid routes how it was paid and the decision. Never the body or the query (they
// carry the caller's screening input, which SPEC §8.8 says is not stored).
func (s *Server) middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		s.requests.Add(1)
		rec := &recorder{ResponseWriter: w}
		if r.ContentLength != 0 {
			// Every body must arrive within core.BodyReadTimeout, read or not: Go's server drains a body the
			// handler did not read before it answers, and a sender that stalls would hold the connection and
			// the answer forever. ReadBody clears the deadline once it has the whole body (and does not set
			// it again: core.BodyDeadline).
			rec.deadline = setReadDeadline(w, start.Add(core.BodyReadTimeout))
		}
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				s.log.Error("handler panic", "path", r.URL.Path, "panic", p)
				if rec.status == 0 {
					s.writeError(rec, errorf(http.StatusInternalServerError, core.CodeInternal, "internal error"))
				}
			}
			l := requestLine{method: r.Method, path: r.URL.Path, status: rec.status, bytes: rec.bytes,
				latencyMs: float64(time.Since(start).Microseconds()) / 1000, errCode: rec.errCode,
				payment: rec.payment, decision: rec.decision, rcpt: rec.receipt}
			l.log(r.Context(), s.log)
			s.metrics.record(r.URL.Path, rec.status, time.Since(start))
		}()
		next.ServeHTTP(rec, r)
	})
}

// setReadDeadline is http.ResponseController's SetReadDeadline without allocating the controller when w
// is net/http's own ResponseWriter (which has the method), as it is in front of the middleware.
func setReadDeadline(w http.ResponseWriter, t time.Time) bool {
	if d, ok := w.(interface{ SetReadDeadline(time.Time) error }); ok {
		return d.SetReadDeadline(t) == nil
	}
	return http.NewResponseController(w).SetReadDeadline(t) == nil
}

// note records log fields on the request's recorder, if there is one.
func note(w http.ResponseWriter, f func(*recorder)) {
	if rec, ok := w.(*recorder); ok {
		f(rec)
	}
}
