package server

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/payguard/payguard/server/core"
)

// apiError is an error answer: a status and the body's code and message (core.Error: the codes are core's,
// shared with MCP).
type apiError = core.Error

var errorf = core.Errorf

// writeError answers with e in the one JSON error shape of SPEC §9.1:
// {"error":{"code","message"[,"nonce"]},"data_as_of"} (errbody.Error.ServerBody).
func (s *Server) writeError(w http.ResponseWriter, e *apiError) {
	b := e.ServerBody(s.dataAsOf())
	if e.Status == http.StatusServiceUnavailable || e.Status >= 500 {
		w.Header().Set("Cache-Control", "no-store")
	}
	s.writeJSON(w, e.Status, b)
	if rec, ok := w.(*recorder); ok {
		rec.errCode = e.Code
	}
}

// jsonBuffers holds response buffers between requests: a preflight answer is a few KB (the receipt's JWS
// carries the result again), and json.Marshal would allocate and copy it once more per response.
var jsonBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// maxPooledJSON bounds the buffers kept in jsonBuffers, so one large answer does not pin its memory.
const maxPooledJSON = 64 << 10

// writeJSON writes v with the X-Data-As-Of header every response carries. The body is what json.Marshal
// gives, then a newline. A json.RawMessage is JSON this process encoded (a preflight's signed result): it is
// written as it is, where the encoder would scan and copy it again.
func (s *Server) writeJSON(w http.ResponseWriter, status int, v any) {
	if raw, ok := v.(json.RawMessage); ok {
		s.writeHeaders(w, status, len(raw)+1)
		w.Write(raw)
		w.Write(newline) // into the response's buffer: no copy of raw to append it
		return
	}
	buf := jsonBuffers.Get().(*bytes.Buffer)
	defer func() {
		if buf.Cap() <= maxPooledJSON {
			buf.Reset()
			jsonBuffers.Put(buf)
		}
	}()
	if err := json.NewEncoder(buf).Encode(v); err != nil {
		status = http.StatusInternalServerError
		buf.Reset()
		buf.WriteString(`{"error":{"code":"internal_error","message":"response could not be encoded"},"data_as_of":"` +
			s.dataAsOf() + "\"}\n")
	}
	s.writeHeaders(w, status, buf.Len())
	w.Write(buf.Bytes()) // the writer copies it (bufio), so buf can go back to the pool after
}

var newline = []byte{'\n'}

// writeHeaders writes a JSON answer's headers and status. The body's length is stated: without it net/http
// sends an answer over 2 KiB (a preflight's, with its receipt) chunked.
func (s *Server) writeHeaders(w http.ResponseWriter, status, length int) {
	setHeaders(w.Header(), "Content-Type", "application/json", "X-Data-As-Of", s.dataAsOf(),
		"Content-Length", strconv.Itoa(length))
	w.WriteHeader(status)
}

// setHeaders is Header.Set of each key and value in kv (key, value, key, value…), with one allocation for
// all the values where Set makes a one-string slice for each. Each key's slice has its own capacity of one,
// so an Add to one of them copies it rather than writing into the next.
func setHeaders(h http.Header, kv ...string) {
	vals := make([]string, len(kv)/2)
	for i := range vals {
		vals[i] = kv[2*i+1]
		h[http.CanonicalHeaderKey(kv[2*i])] = vals[i : i+1 : i+1]
	}
}

// writeText writes a non-JSON document; its data freshness is in the X-Data-As-Of header.
func (s *Server) writeText(w http.ResponseWriter, contentType, text string) {
	h := w.Header()
	h.Set("Content-Type", contentType)
	h.Set("X-Data-As-Of", s.dataAsOf())
	w.WriteHeader(http.StatusOK)
	w.Write([]byte(text))
}

// allowMethods answers 405 with Allow unless r's method is one of methods.
func (s *Server) allowMethods(w http.ResponseWriter, r *http.Request, methods ...string) bool {
	for _, m := range methods {
		if r.Method == m {
			return true
		}
	}
	w.Header().Set("Allow", strings.Join(methods, ", "))
	s.writeError(w, errorf(http.StatusMethodNotAllowed, core.CodeMethodNotAllowed,
		r.Method+" is not allowed here; use "+strings.Join(methods, " or ")))
	return false
}
