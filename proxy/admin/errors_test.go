package admin_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/payguard/payguard/proxy/admin"
)

// Every refusal the admin listener answers is payguard's one error body (SPEC 11.7, docs/approvals.md):
// JSON {"error", "message"}, never Go's text/plain "404 page not found" or "Method Not Allowed" from a
// ServeMux that found no route, whether the route is missing in the approval API (behind the token), at the
// top level or in the console. A 405 keeps its Allow header. The mux's own 404 says no_route, not not_found,
// which the API keeps for a hold that does not exist (TestAttackDecideTokenReachesOnlyDecide tells them
// apart). Seen failing before the mux's refusals were rendered (errbody.Routes): text/plain bodies.
func TestAdminRefusalsAreTheOneErrorBody(t *testing.T) {
	e := newEnv(t)
	for _, c := range []struct {
		method, path, token string
		want                int
		code, allow         string
	}{
		{"GET", "/v1/nothing", testToken, 404, "no_route", ""},
		{"PUT", "/v1/budget", testToken, 405, "method_not_allowed", "GET, HEAD"},
		{"GET", "/v1/holds/h1/approve", testToken, 405, "method_not_allowed", "POST"},
		{"DELETE", "/healthz", "", 404, "no_route", ""},    // "/" is the console's, whatever the method
		{"GET", "/v1/decide", "", 401, "unauthorized", ""}, // "/v1/" needs the token first
		{"GET", "/nothing", "", 404, "no_route", ""},
		{"GET", "/console/api/nothing", "", 404, "no_route", ""},
		{"PUT", "/console/session", "", 405, "method_not_allowed", "GET, HEAD, POST"},
		{"GET", "/v1/holds/none", testToken, 404, "not_found", ""},
		{"GET", "/v1/budget", "", 401, "unauthorized", ""},
	} {
		req, _ := http.NewRequest(c.method, e.url+c.path, nil)
		if c.token != "" {
			req.Header.Set("Authorization", "Bearer "+c.token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var body struct{ Error, Message string }
		ct := resp.Header.Get("Content-Type")
		derr := json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if resp.StatusCode != c.want || !strings.HasPrefix(ct, "application/json") || derr != nil ||
			body.Error != c.code || body.Message == "" {
			t.Errorf("%s %s: %d %q %+v (%v), want %d application/json with error %q and a message",
				c.method, c.path, resp.StatusCode, ct, body, derr, c.want, c.code)
		}
		if got := resp.Header.Get("Allow"); got != c.allow {
			t.Errorf("%s %s: Allow %q, want %q", c.method, c.path, got, c.allow)
		}
	}
}

// /ca.pem on a listener given no CA certificate refuses with the one error body too (code and message), not
// a bare {"error"}. Seen failing before ({"error":"no CA certificate"}, no message).
func TestCAPEMWithoutACertificateIsTheOneErrorBody(t *testing.T) {
	e := newEnv(t)
	srv := httptest.NewServer(admin.New(e.core, admin.Options{Token: testToken, Holds: e.store}))
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/ca.pem")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct{ Error, Message string }
	derr := json.NewDecoder(resp.Body).Decode(&body)
	if resp.StatusCode != 404 || derr != nil || body.Error != "no_ca_certificate" || body.Message == "" {
		t.Errorf("/ca.pem without a certificate: %d %+v %v", resp.StatusCode, body, derr)
	}
}
