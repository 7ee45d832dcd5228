package errbody

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
)

// The flat rendering is the wire the proxy, the admin API and the console answered with before this type
// (proxy/errors.go's proxyError, the admin API's and the console's {error, message}): the code under
// "error", no hint member when there is none, no status.
func TestFlatWire(t *testing.T) {
	rec := httptest.NewRecorder()
	Write(rec, New(http.StatusNotFound, "not_found", "no hold with that id"))
	if rec.Code != 404 || rec.Header().Get("Content-Type") != "application/json" || rec.Header().Get("Cache-Control") != "no-store" {
		t.Fatalf("%d %v", rec.Code, rec.Header())
	}
	if got := rec.Body.String(); got != `{"error":"not_found","message":"no hold with that id"}`+"\n" {
		t.Fatalf("body %s", got)
	}
	b, _ := json.Marshal(Error{Code: "upstream_timeout", Message: "m", Hint: "h"})
	if string(b) != `{"error":"upstream_timeout","message":"m","hint":"h"}` {
		t.Fatalf("with hint: %s", b)
	}
}

// The server's rendering is SPEC §9.1's shape, the nonce only when set and never the hint.
func TestServerWire(t *testing.T) {
	e := &Error{Status: 502, Code: "settlement_outcome_unknown", Message: "m", Hint: "h", Nonce: "0xabc"}
	b, _ := json.Marshal(e.ServerBody("2026-11-27T00:00:00Z"))
	if string(b) != `{"error":{"code":"settlement_outcome_unknown","message":"m","nonce":"0xabc"},"data_as_of":"2026-11-27T00:00:00Z"}` {
		t.Fatalf("server body %s", b)
	}
	b, _ = json.Marshal(New(400, "invalid_json", "x").ServerBody(""))
	if string(b) != `{"error":{"code":"invalid_json","message":"x"},"data_as_of":""}` {
		t.Fatalf("server body without nonce %s", b)
	}
}
