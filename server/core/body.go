package core

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"time"

	"github.com/payguard/payguard/internal/readlimit"
	"github.com/payguard/payguard/x402"
)

// SPEC §10 limits enforced at the edge, before any work or payment.
const (
	MaxBodyBytes    = x402.MaxBodyBytes // request body: 64 KiB of actual bytes (SPEC §10), one constant everywhere
	BodyReadTimeout = 10 * time.Second  // the whole body must arrive within this
)

// BodyDeadline is a ResponseWriter that knows whether its connection's read deadline for this request's
// body (BodyReadTimeout from the request's start) is already set: the server's middleware sets it for every
// request with a body, before any handler runs.
type BodyDeadline interface {
	BodyDeadlineSet() bool
}

// ReadBody reads at most max bytes of r's body within BodyReadTimeout: the HTTP API with MaxBodyBytes, MCP
// with a larger max for its JSON-RPC envelope. It counts the bytes actually read (a lying or absent Content-Length changes
// nothing) and sets a read deadline on the connection, so a slow sender gets 408 instead of holding a
// handler. Errors are 413 body_too_large, 408 body_timeout or 400 invalid_json, with Connection: close set.
func ReadBody(w http.ResponseWriter, r *http.Request, max int) ([]byte, *Error) {
	tooLarge := func() *Error { // built only when refused: a body that fits costs no Sprintf
		return &Error{Status: http.StatusRequestEntityTooLarge, Code: CodeBodyTooLarge,
			Message: fmt.Sprintf("request body is over %d KiB", max>>10)}
	}
	if r.ContentLength > int64(max) {
		// Answer at once: with Connection: close Go's server does not wait for the unread body before
		// answering, and it still lingers before closing, so a client writing the body reads the 413.
		w.Header().Set("Connection", "close")
		return nil, tooLarge()
	}
	rc := http.NewResponseController(w)
	// Not every ResponseWriter supports deadlines (an httptest recorder does not); the limit on bytes still
	// holds. A socket deadline runs on the wall clock, not the injected one. The server's middleware has
	// already set this request's deadline (BodyDeadline): setting it again would move it by the
	// microseconds since, for a call into the runtime's timers.
	preset := false
	if d, ok := w.(BodyDeadline); ok {
		preset = d.BodyDeadlineSet()
	}
	deadlineSet := preset || rc.SetReadDeadline(time.Now().Add(BodyReadTimeout)) == nil
	body, err := readlimit.ReadAll(r.Body, int64(max)+1, r.ContentLength)
	if err == nil && deadlineSet {
		// Clear the deadline only after a complete read: after a failure it stays expired, so the server's
		// own drain of the unread body fails at once instead of waiting for the slow sender.
		rc.SetReadDeadline(time.Time{})
	}
	if err != nil {
		w.Header().Set("Connection", "close")
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return nil, &Error{Status: http.StatusRequestTimeout, Code: CodeBodyTimeout, Message: "request body was not received within 10 seconds"}
		}
		return nil, &Error{Status: http.StatusBadRequest, Code: CodeInvalidJSON, Message: "request body could not be read: " + err.Error()}
	}
	if len(body) > max {
		w.Header().Set("Connection", "close")
		return nil, tooLarge()
	}
	return body, nil
}
