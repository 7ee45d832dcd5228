package server

import (
	"errors"
	"io"
	"net/http"
	"os"
	"time"
)

// SPEC limits enforced at the edge, before any work or payment.
const (
	MaxBodyBytes    = 64 << 10         // request body: 64 KiB of actual bytes
	BodyReadTimeout = 10 * time.Second // the whole body must arrive within this
)

// readBody reads at most MaxBodyBytes within BodyReadTimeout. It counts the bytes actually read (a lying
// or absent Content-Length changes nothing) and sets a read deadline on the connection, so a slow sender
// gets 408 instead of holding a handler.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, *apiError) {
	if r.ContentLength > MaxBodyBytes {
		return nil, errorf(http.StatusRequestEntityTooLarge, CodeBodyTooLarge, "request body is over 64 KiB")
	}
	rc := http.NewResponseController(w)
	// Not every ResponseWriter supports deadlines (an httptest recorder does not); the limit on bytes still
	// holds. A socket deadline runs on the wall clock, not the injected one.
	deadlineSet := rc.SetReadDeadline(time.Now().Add(BodyReadTimeout)) == nil
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxBodyBytes+1))
	if err == nil && deadlineSet {
		// Clear the deadline only after a complete read: after a failure it stays expired, so the server's
		// own drain of the unread body fails at once instead of waiting for the slow sender.
		rc.SetReadDeadline(time.Time{})
	}
	if err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			w.Header().Set("Connection", "close")
			return nil, errorf(http.StatusRequestTimeout, CodeBodyTimeout, "request body was not received within 10 seconds")
		}
		w.Header().Set("Connection", "close")
		return nil, errorf(http.StatusBadRequest, CodeInvalidJSON, "request body could not be read: "+err.Error())
	}
	if len(body) > MaxBodyBytes {
		w.Header().Set("Connection", "close")
		return nil, errorf(http.StatusRequestEntityTooLarge, CodeBodyTooLarge, "request body is over 64 KiB")
	}
	return body, nil
}
