//go:build unix

package server

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
)

// A JSON answer states its length: net/http would otherwise send any answer over 2 KiB (a preflight's
// result with its receipt is about 2.4 KiB) chunked, in pieces the client reassembles.
func TestJSONAnswersStateTheirLength(t *testing.T) {
	s := benchServer(t)
	srv := httptest.NewUnstartedServer(nil)
	srv.Config = s.HTTPServer()
	srv.Start()
	defer srv.Close()
	for _, c := range []struct{ method, path, body string }{
		{http.MethodPost, "/v1/preflight?trial=1", benchRateBody},                  // a result encoded once (DecideJSON)
		{http.MethodGet, "/health", ""},                                            // a body encoded on the way out
		{http.MethodPost, "/v1/preflight?trial=1", `{"rules":{"no_such_rule":1}}`}, // an error
	} {
		resp, err := http.Post(srv.URL+c.path, "application/json", strings.NewReader(c.body))
		if c.method == http.MethodGet {
			resp, err = http.Get(srv.URL + c.path)
		}
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if c.body == benchRateBody && (resp.StatusCode != 200 || len(body) <= 2048) {
			t.Fatalf("%s: %d, %d bytes: want a 200 over 2 KiB", c.path, resp.StatusCode, len(body))
		}
		if len(resp.TransferEncoding) != 0 || resp.Header.Get("Content-Length") != strconv.Itoa(len(body)) {
			t.Errorf("%s %s: Transfer-Encoding %v, Content-Length %q for %d bytes", c.method, c.path,
				resp.TransferEncoding, resp.Header.Get("Content-Length"), len(body))
		}
	}
}
