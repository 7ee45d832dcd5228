// Package errbody is payguard's one error: a stable machine code, a message for a person, a hint that says
// what to do about it where payguard knows, and the HTTP status it is answered with. Every component that
// answers with an error renders this one type: the forward proxy (its own failures, and the code, message
// and hint of a refused payment), the admin API and the console (proxy/admin, proxy/console), and the
// pay-per-call server (server/core.Error is this type, shared with its MCP tools).
//
// It has two renderings, because two wires are specified (SPEC): flat, {"error": code, "message",
// "hint"?}, the JSON the proxy, the admin API and the console have always answered with (Write); and the
// server's SPEC §9.1 shape, {"error": {"code", "message", "nonce"?}, "data_as_of"} (ServerBody).
package errbody

import (
	"encoding/json"
	"net/http"
)

// Error is one error answer. Its JSON (the flat rendering) names Code "error".
type Error struct {
	Status  int    `json:"-"`     // the HTTP status to answer with
	Code    string `json:"error"` // stable, for programs (e.g. not_found, payment_blocked)
	Message string `json:"message"`
	Hint    string `json:"hint,omitempty"` // what the caller (or its operator) can do about it
	// Nonce is set on a pay-per-call settlement whose outcome is unknown: the authorization the caller
	// checks on chain before paying again (server only).
	Nonce string `json:"nonce,omitempty"`
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

// New is an Error with a status, a code and a message.
func New(status int, code, message string) *Error {
	return &Error{Status: status, Code: code, Message: message}
}

// Write answers with e, flat, as JSON that no cache keeps.
func Write(w http.ResponseWriter, e *Error) {
	data, _ := json.Marshal(e)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(e.Status)
	w.Write(append(data, '\n'))
}

// serverBody is the pay-per-call server's rendering (SPEC §9.1).
type serverBody struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
		Nonce   string `json:"nonce,omitempty"`
	} `json:"error"`
	DataAsOf string `json:"data_as_of"`
}

// ServerBody is e as the pay-per-call server answers it (SPEC §9.1): {"error": {"code", "message",
// "nonce"?}, "data_as_of"}, with the freshness of the data it serves. The hint is not part of that wire.
func (e *Error) ServerBody(dataAsOf string) any {
	var b serverBody
	b.Error.Code, b.Error.Message, b.Error.Nonce = e.Code, e.Message, e.Nonce
	b.DataAsOf = dataAsOf
	return b
}

// Routes is mux with its own refusals rendered as the one error body: a request no pattern matches gets 404
// no_route, one whose path matches under another method 405 method_not_allowed (with the mux's Allow
// header), where http.ServeMux answers text/plain. Everything else, redirects to a cleaned path included, is
// the mux's.
func Routes(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h, pattern := mux.Handler(r)
		if pattern != "" {
			mux.ServeHTTP(w, r)
			return
		}
		// No pattern: the mux's 404 or 405. Run it on the side only for its status and Allow header.
		rec := &statusOnly{header: http.Header{}}
		h.ServeHTTP(rec, r)
		if rec.status == http.StatusMethodNotAllowed {
			allow := rec.header.Get("Allow")
			w.Header().Set("Allow", allow)
			Write(w, New(http.StatusMethodNotAllowed, "method_not_allowed", r.Method+" is not allowed here (allowed: "+allow+")"))
			return
		}
		Write(w, New(http.StatusNotFound, "no_route", "no such route on this listener"))
	})
}

// statusOnly keeps a handler's status and headers and drops its body.
type statusOnly struct {
	header http.Header
	status int
}

func (s *statusOnly) Header() http.Header { return s.header }
func (s *statusOnly) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
}
func (s *statusOnly) Write(b []byte) (int, error) {
	s.WriteHeader(http.StatusOK)
	return len(b), nil
}
