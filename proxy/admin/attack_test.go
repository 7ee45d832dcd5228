package admin_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/payguard/payguard/proxy"
	"github.com/payguard/payguard/proxy/admin"
)

// The decide-only token reaches POST /v1/decide and nothing else, in any spelling of another route's path
// or method: doubled or encoded slashes, dot segments, a trailing slash, absolute-form targets, method
// override headers. Every answer is a refusal (401 without the admin token), a redirect to the clean path
// (which then refuses) or no such route; never an approval, a list of holds, the budget or the alarms.
// Already stopped when written (Go's ServeMux cleans and redirects before it matches); kept as a
// regression test.
func TestAttackDecideTokenReachesOnlyDecide(t *testing.T) {
	const decideToken = "decide-only-token-0123456789"
	e := newEnv(t, func(_ *proxy.Options, o *admin.Options) { o.DecideToken = decideToken })
	host := strings.TrimPrefix(e.url, "http://")
	auth := "Authorization: Bearer " + decideToken + "\r\n"
	for _, line := range []string{
		"GET /v1/holds", "GET //v1/holds", "GET /v1//holds", "GET /v1/holds/", "GET /v1/./holds",
		"GET /v1/decide/../holds", "GET /v1/holds/../holds", "GET /v1%2Fholds", "GET /v1/%68olds", "GET /V1/holds",
		"GET /v1/budget", "GET /v1/alarms", "DELETE /v1/alarms/127.0.0.1", "GET /v1/endpoints",
		"POST /v1/holds/h1/approve", "POST //v1/holds/h1/approve", "POST /v1/decide/../holds/h1/approve",
		"POST /v1/holds/h1%2Fapprove", "POST /v1/holds/h1/approve/", "POST /v1/decide/../../v1/holds/h1/approve",
		"GET http://" + host + "/v1/holds", "POST http://" + host + "/v1/holds/h1/approve",
		"POST /v1/decide/", "POST /v1/decide?x=/v1/holds",
	} {
		for _, extra := range []string{"", "X-HTTP-Method-Override: GET\r\n", "X-HTTP-Method: DELETE\r\n"} {
			req := line + " HTTP/1.1\r\nHost: " + host + "\r\n" + auth + extra + "Content-Length: 0\r\nConnection: close\r\n\r\n"
			code, body := e.raw(req)
			switch {
			case code == http.StatusUnauthorized, code == http.StatusMovedPermanently, code == http.StatusTemporaryRedirect,
				code == http.StatusMethodNotAllowed, code == http.StatusBadRequest && strings.HasPrefix(line, "POST /v1/decide"):
			case code == http.StatusNotFound && !strings.Contains(body, "not_found"):
				// the console's or the mux's own 404: no route
			default:
				t.Errorf("%q %q with the decide token: %d %s", line, extra, code, body)
			}
			if code == http.StatusMovedPermanently || code == http.StatusTemporaryRedirect {
				loc := strings.Fields(body)[0]
				if strings.HasPrefix(loc, "http") {
					t.Errorf("%q redirected off the listener: %s", line, loc)
				}
			}
		}
	}
}

// The admin listener answers only to its own names (proxy/admin hostGuard), whatever spelling a rebinding page's
// name arrives in: trailing dot, upper case, a port, an absolute-form request target naming another host
// beside a good Host header, an empty Host, a name that starts like an address or like localhost.
// Already stopped when written; kept as a regression test.
func TestAttackAdminHostSpellings(t *testing.T) {
	e := newEnv(t)
	auth := "Authorization: Bearer " + testToken + "\r\n"
	for _, c := range []struct {
		target, host string
		want         int
	}{
		{"/v1/budget", "attacker.example", 421},
		{"/v1/budget", "attacker.example.", 421},
		{"/v1/budget", "ATTACKER.EXAMPLE:8403", 421},
		{"/v1/budget", "127.0.0.1.attacker.example", 421},
		{"/v1/budget", "localhost.attacker.example", 421},
		{"/v1/budget", "0x7f000001", 421},
		{"/v1/budget", "", 421},
		{"http://attacker.example/v1/budget", "127.0.0.1", 421},
		{"/v1/budget", "LOCALHOST.:8403", 200},
		{"/v1/budget", "127.0.0.1:1", 200},
		{"/v1/budget", "[::1]", 200},
		{"http://localhost/v1/budget", "attacker.example", 200}, // the absolute target is the host asked for (RFC 9112 §3.2.2)
	} {
		req := "GET " + c.target + " HTTP/1.1\r\nHost: " + c.host + "\r\n" + auth + "Connection: close\r\n\r\n"
		if code, body := e.raw(req); code != c.want {
			t.Errorf("GET %s with Host %q: %d %s, want %d", c.target, c.host, code, body, c.want)
		}
	}
}

// The console's sign-in throttle keys on the TCP peer and trusts no forwarding header: a flood that names a
// new address in X-Forwarded-For, X-Real-IP or Forwarded on every try is still throttled after five
// failures, and one that names the approver's address does not lock the approver out. Already stopped
// when written; kept as a regression test.
func TestAttackConsoleThrottleIgnoresForwardingHeaders(t *testing.T) {
	e := newEnv(t)
	attacker := newConsoleClientFrom(t, e.url, "127.0.0.2")
	for i := range 20 {
		spoof := fmt.Sprintf("10.9.%d.%d", i/250, i%250+1)
		code, _, _ := attacker.postH("/console/session", map[string]string{"token": "wrong-token-wrong-token"}, map[string]string{
			"X-Forwarded-For": spoof + ", 127.0.0.1", "X-Real-IP": spoof, "Forwarded": "for=" + spoof, "True-Client-IP": spoof,
		})
		if i >= 6 && code != http.StatusTooManyRequests {
			t.Fatalf("try %d with a new forwarded address: %d, want 429", i, code)
		}
	}
	approver := newConsoleClient(t, e.url) // 127.0.0.1, the address the flood claimed
	if code := approver.signIn(testToken); code != 200 {
		t.Fatalf("the approver whose address the flood named: %d, want 200", code)
	}
}
