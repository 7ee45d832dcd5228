package admin_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/payguard/payguard/proxy"
	"github.com/payguard/payguard/proxy/admin"
	"github.com/payguard/payguard/store"
)

// No state change without a session and its CSRF token, from the console's own origin, as JSON: each
// missing piece is refused and the hold stays pending; the bearer token alone does not work here (the
// console is for browsers; the API at /v1 is for programs).
func TestConsoleStateChangeNeedsSessionAndCSRF(t *testing.T) {
	logs := &lockedBuffer{}
	e := newEnv(t, withLogger(logs))
	id := e.hold("hold_1", time.Now())
	approve := "/console/api/holds/" + id + "/approve"
	body := map[string]string{"by": "mallory", "note": "x"}

	anon := newConsoleClient(t, e.url)
	if code, out := anon.post(approve, body, map[string]string{"Authorization": "Bearer " + testToken}); code != 401 {
		t.Fatalf("no session (bearer only): %d %s", code, out)
	}
	c := newConsoleClient(t, e.url)
	if code := c.signIn(testToken); code != 200 || c.csrf == "" {
		t.Fatalf("sign-in: %d", code)
	}
	for name, hdr := range map[string]map[string]string{
		"no CSRF token":           {"X-CSRF-Token": ""},
		"wrong CSRF token":        {"X-CSRF-Token": strings.Repeat("0", 64)},
		"cross-origin":            {"Origin": "http://evil.example"},
		"cross-site fetch":        {"Origin": "", "Sec-Fetch-Site": "cross-site"},
		"form-encoded (no JSON)":  {"Content-Type": "application/x-www-form-urlencoded"},
		"text/plain (CORS-safe)":  {"Content-Type": "text/plain"},
		"other port, same host":   {"Origin": strings.Replace(e.url, "127.0.0.1:", "127.0.0.1:1", 1)},
		"null origin (sandboxed)": {"Origin": "null"},
	} {
		if code, out := c.post(approve, body, hdr); code < 400 {
			t.Errorf("%s: %d %s", name, code, out)
		}
		if st := e.holdStatus(id); st != store.HoldPending {
			t.Fatalf("%s changed the hold to %s", name, st)
		}
	}
	if code, out := c.post(approve, map[string]string{"by": "alice", "note": "ok"}, nil); code != 200 {
		t.Fatalf("approve with session and CSRF: %d %s", code, out)
	}
	hd, _ := e.store.GetHold(t.Context(), id)
	if hd.Status != store.HoldApproved || hd.ResolvedBy != "alice" || hd.Note != "ok" {
		t.Fatalf("hold after approval: %+v", hd)
	}
	// A second decision on the same hold is a conflict, not a flip.
	if code, _ := c.post("/console/api/holds/"+id+"/deny", map[string]string{"by": "bob"}, nil); code != http.StatusConflict {
		t.Errorf("deny after approve: %d", code)
	}
	// Signing out ends the session: the old cookie and CSRF token no longer work.
	if code, _ := c.post("/console/signout", map[string]string{}, nil); code != 200 {
		t.Fatal("sign out failed")
	}
	if resp, _ := c.get("/console/api/state"); resp.StatusCode != 401 {
		t.Errorf("state after sign-out: %d", resp.StatusCode)
	}
	if strings.Contains(logs.String(), testToken) {
		t.Error("the admin token appears in the logs")
	}
}

// Sign-in: a wrong token sets no cookie; the right one sets an HttpOnly, SameSite=Strict cookie and never
// puts the token in a URL or the logs; a cross-origin sign-in is refused; every console response carries
// the strict CSP; an idle session expires.
func TestConsoleSignInSessionAndHeaders(t *testing.T) {
	logs := &lockedBuffer{}
	var mu sync.Mutex
	now := time.Now()
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	e := newEnv(t, withLogger(logs), withClock(clock))
	c := newConsoleClient(t, e.url)

	resp, page := c.get("/")
	csp := resp.Header.Get("Content-Security-Policy")
	if resp.StatusCode != 200 || !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe-inline") ||
		!strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "frame-ancestors 'none'") {
		t.Fatalf("GET /: %d, CSP %q", resp.StatusCode, csp)
	}
	if n, m := bytes.Count(page, []byte("<script")), bytes.Count(page, []byte(`<script src="/console/`)); n != m || regexp.MustCompile(`\son[a-z]+=`).Match(page) {
		t.Error("the page has inline script or an inline event handler")
	}
	if code := c.signIn("wrong-token-wrong-token"); code != 401 {
		t.Fatalf("wrong token: %d", code)
	}
	if resp, _ := c.get("/console/api/state"); resp.StatusCode != 401 {
		t.Fatalf("state without a session: %d", resp.StatusCode)
	}
	other := newConsoleClient(t, e.url)
	if code, _ := other.post("/console/session", map[string]string{"token": testToken}, map[string]string{"Origin": "http://evil.example"}); code != 403 {
		t.Errorf("cross-origin sign-in: %d", code)
	}
	b, _ := json.Marshal(map[string]string{"token": testToken})
	if raw, err := http.Post(e.url+"/console/session", "application/json", bytes.NewReader(b)); err != nil || raw.StatusCode != 403 {
		t.Fatalf("a sign-in without Origin: %v %v, want 403", raw.StatusCode, err)
	}
	rq, _ := http.NewRequest("POST", e.url+"/console/session", bytes.NewReader(b))
	rq.Header.Set("Content-Type", "application/json")
	rq.Header.Set("Origin", e.url)
	raw, err := http.DefaultClient.Do(rq)
	if err != nil {
		t.Fatal(err)
	}
	raw.Body.Close()
	var cookie *http.Cookie
	for _, ck := range raw.Cookies() {
		if ck.Name == "payguard_session" {
			cookie = ck
		}
	}
	if cookie == nil || !cookie.HttpOnly || cookie.SameSite != http.SameSiteStrictMode || cookie.Value == testToken || cookie.Path != "/" {
		t.Fatalf("session cookie %+v", cookie)
	}
	if raw.Header.Get("Content-Security-Policy") == "" {
		t.Error("no CSP on the sign-in answer")
	}
	if code := c.signIn(testToken); code != 200 {
		t.Fatal("sign-in failed")
	}
	if resp, out := c.get("/console/api/state"); resp.StatusCode != 200 || !bytes.Contains(out, []byte(`"budget"`)) {
		t.Fatalf("state: %d %s", resp.StatusCode, out)
	}
	// The page's polling is not activity: a console left open and unattended signs out after 30 min.
	mu.Lock()
	now = now.Add(20 * time.Minute)
	mu.Unlock()
	if resp, _ := c.get("/console/api/state"); resp.StatusCode != 200 {
		t.Fatalf("state at 20 min: %d", resp.StatusCode)
	}
	mu.Lock()
	now = now.Add(11 * time.Minute) // 31 min after sign-in, 11 after the last poll
	mu.Unlock()
	if resp, _ := c.get("/console/api/state"); resp.StatusCode != 401 {
		t.Errorf("an idle session (only polled) did not expire: %d", resp.StatusCode)
	}
	if strings.Contains(logs.String(), testToken) {
		t.Error("the admin token appears in the logs")
	}
}

// Sign-in failures are throttled per client address with backoff, so the token cannot be guessed at
// speed through the console, and a flood from one address never locks out an approver at another: on the
// previous main one global counter answered every address 429 after ten failures a minute. The bearer API
// keeps answering the token throughout, from the flooding address too.
func TestConsoleSignInFloodFromOneAddress(t *testing.T) {
	var mu sync.Mutex
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	e := newEnv(t, withClock(clock))
	attacker := newConsoleClientFrom(t, e.url, "127.0.0.2")
	codes := make([]int, 200)
	var retry []string
	for i := range codes {
		code, _, hdr := attacker.postH("/console/session", map[string]string{"token": "wrong-token-wrong-token"}, nil)
		codes[i] = code
		if code == http.StatusTooManyRequests {
			retry = append(retry, hdr.Get("Retry-After"))
		}
	}
	// The approver, at another address, signs in at once and sees the console.
	approver := newConsoleClient(t, e.url)
	if code := approver.signIn(testToken); code != 200 {
		t.Fatalf("the approver at another address, during the flood: %d, want 200", code)
	}
	if resp, out := approver.get("/console/api/state"); resp.StatusCode != 200 {
		t.Fatalf("the approver's state: %d %s", resp.StatusCode, out)
	}
	// The flooding address: five free failures, then 429 with Retry-After, the right token included.
	for i, code := range codes {
		if i < 5 && code != 401 || i >= 5 && code != http.StatusTooManyRequests && !(i == 5 && code == 401) {
			t.Fatalf("wrong token %d from the flooding address: %d (all: %v)", i, code, codes)
		}
	}
	if len(retry) == 0 || retry[0] == "" {
		t.Fatalf("429 without Retry-After: %q", retry)
	}
	if code := attacker.signIn(testToken); code != http.StatusTooManyRequests {
		t.Fatalf("the flooding address signed in during its backoff: %d", code)
	}
	// The bearer API (what the CLI uses) answers the token, from the flooding address as well.
	req, _ := http.NewRequest("GET", e.url+"/v1/holds", nil)
	req.Header.Set("Authorization", "Bearer "+testToken)
	resp, err := attacker.client.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("bearer API from the flooding address: %v %v", resp, err)
	}
	resp.Body.Close()
	// Backoff: once it has passed, the flooding address gets one try, and a wrong one waits longer.
	mu.Lock()
	now = now.Add(maxConsoleBackoff)
	mu.Unlock()
	if code := attacker.signIn("wrong-token-wrong-token"); code != 401 {
		t.Fatalf("after the backoff: %d, want 401", code)
	}
	if code := attacker.signIn(testToken); code != http.StatusTooManyRequests {
		t.Fatalf("right after another failure: %d, want 429", code)
	}
	mu.Lock()
	now = now.Add(maxConsoleBackoff)
	mu.Unlock()
	if code := attacker.signIn(testToken); code != 200 {
		t.Fatalf("the right token once the backoff passed: %d", code)
	}
}

// DNS rebinding: a page at http://attacker.example:<port> whose name now resolves to the admin listener
// sends its requests with Host: attacker.example. Every admin route refuses them with 421, the bearer API
// too (a token in such a request is refused, not used); the listener's own address, localhost and a
// configured name are answered. On the previous main the rebound page signed in with a guessed token, or
// read /metrics and /readyz.
func TestAdminRefusesAForeignHost(t *testing.T) {
	e := newEnv(t, func(_ *proxy.Options, o *admin.Options) { o.Hosts = []string{"Payguard-Admin.internal."} })
	port := e.url[strings.LastIndex(e.url, ":")+1:]
	send := func(method, path, host string, hdr map[string]string, body string) int {
		t.Helper()
		req, _ := http.NewRequest(method, e.url+path, strings.NewReader(body))
		req.Host = host
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	signIn := func(host string) int {
		return send("POST", "/console/session", host, map[string]string{"Content-Type": "application/json",
			"Origin": "http://" + host}, `{"token":"`+testToken+`"}`)
	}
	bearer := map[string]string{"Authorization": "Bearer " + testToken}
	for _, foreign := range []string{"attacker.example:" + port, "attacker.example", "127.0.0.1.attacker.example:" + port, "localhost.attacker.example"} {
		for _, c := range []struct {
			method, path string
			hdr          map[string]string
		}{{"GET", "/", nil}, {"GET", "/console/app.js", nil}, {"GET", "/console/session", nil}, {"GET", "/healthz", nil},
			{"GET", "/metrics", nil}, {"GET", "/readyz", nil}, {"GET", "/v1/holds", bearer}, {"GET", "/v1/budget", bearer}} {
			if code := send(c.method, c.path, foreign, c.hdr, ""); code != http.StatusMisdirectedRequest {
				t.Errorf("%s %s with Host %s: %d, want 421", c.method, c.path, foreign, code)
			}
		}
		if code := signIn(foreign); code != http.StatusMisdirectedRequest {
			t.Errorf("sign-in with Host %s: %d, want 421", foreign, code)
		}
	}
	for _, own := range []string{"127.0.0.1:" + port, "localhost:" + port, "LOCALHOST.", "payguard-admin.internal:" + port, "[::1]:" + port} {
		if code := send("GET", "/v1/holds", own, bearer, ""); code != 200 {
			t.Errorf("bearer API with Host %s: %d, want 200", own, code)
		}
		if code := signIn(own); code != 200 {
			t.Errorf("sign-in with Host %s: %d, want 200", own, code)
		}
	}
}

// GET /v1/holds?status=all (documented) lists every hold, and a status filter applies to the status shown:
// a pending hold past its expiry is listed under expired, not pending. On the previous main "all" was a
// 400 and the lapsed hold was listed as pending (shown expired) and not at all under expired.
func TestHoldsListStatusAllAndExpired(t *testing.T) {
	var mu sync.Mutex
	now := time.Now()
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	e := newEnv(t, withClock(clock))
	id := e.hold("hold_1", clock())
	if got := e.holds("all"); len(got) != 1 || got[0].ID != id || got[0].Status != "pending" {
		t.Fatalf("status=all: %+v", got)
	}
	mu.Lock()
	now = now.Add(time.Hour) // past the hold's ttl (10 min)
	mu.Unlock()
	if got := e.holds("expired"); len(got) != 1 || got[0].ID != id || got[0].Status != "expired" {
		t.Errorf("status=expired: %+v", got)
	}
	if got := e.holds("pending"); len(got) != 0 {
		t.Errorf("status=pending lists a lapsed hold: %+v", got)
	}
	if got := e.holds(""); len(got) != 1 {
		t.Errorf("no status: %+v", got)
	}
	if code, body := e.api("GET", "/v1/holds?status=bogus", testToken, nil); code != 400 || !bytes.Contains(body, []byte("all")) {
		t.Errorf("status=bogus: %d %s", code, body)
	}
}

// maxConsoleBackoff is the console's longest sign-in backoff (proxy/console/throttle.go).
const maxConsoleBackoff = 15 * time.Minute
