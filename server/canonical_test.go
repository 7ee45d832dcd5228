package server

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/payguard/payguard/server/core"
)

// Paths that http.ServeMux would answer on its own (a 301 to the cleaned path for a doubled slash or a dot
// segment, a bare 400 for "*") get the service's JSON error instead: the one error shape, data_as_of, and
// no redirect that a client could follow with another method or without its payment.
func TestNonCanonicalPathsGetTheJSONError(t *testing.T) {
	e := newEnv(t)
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, p := range []string{"/v1//check?name=Acme", "/v1/./check", "/v1/x/../check", "//health", "/v1/check/.", "/v1/preflight//"} {
		resp, err := noFollow.Get(e.http.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		r := result{Response: resp, body: body}
		if resp.StatusCode != http.StatusNotFound || r.errCode(t) != core.CodeNotFound || resp.Header.Get("Location") != "" {
			t.Errorf("GET %s: %d, Location %q: %s", p, resp.StatusCode, resp.Header.Get("Location"), body)
			continue
		}
		if resp.Header.Get("X-Data-As-Of") == "" {
			t.Errorf("GET %s: no X-Data-As-Of header", p)
		}
	}
	if n := e.fac.Calls(); n != 0 {
		t.Fatalf("%d facilitator calls", n)
	}

	// "GET *" (only OPTIONS * is net/http's own): the mux would answer 400 with no body.
	conn, err := net.Dial("tcp", e.http.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, "GET * HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	r := result{Response: resp, body: body}
	if resp.StatusCode != http.StatusBadRequest || r.errCode(t) != core.CodeInvalidParameter || r.json(t)["data_as_of"] == "" ||
		!strings.Contains(resp.Header.Get("Content-Type"), "json") {
		t.Fatalf("GET *: %d %q: %s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
}
