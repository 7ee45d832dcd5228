package admin_test

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/payguard/payguard/policy"
	"github.com/payguard/payguard/preflight"
	"github.com/payguard/payguard/proxy"
	"github.com/payguard/payguard/proxy/admin"
	"github.com/payguard/payguard/proxy/mitm"
	"github.com/payguard/payguard/proxy/view"
	"github.com/payguard/payguard/receipts"
	"github.com/payguard/payguard/store"
	"github.com/payguard/payguard/store/memory"
)

const testToken = "test-admin-token-0123456789"

// env is the admin listener as cmd/payguard composes it: admin.New over a real proxy core (the preflight
// engine, a memory store, a fresh MITM CA), on an httptest listener. Holds are written to the store
// directly: how a hold comes to be is the proxy's business (package proxy's tests drive that end to end).
type env struct {
	t     *testing.T
	core  *proxy.Proxy
	store *memory.Store
	ca    *tls.Certificate
	url   string
}

// envOption changes the proxy's or the admin listener's options before they are built.
type envOption func(*proxy.Options, *admin.Options)

func withLogger(w io.Writer) envOption {
	return func(po *proxy.Options, _ *admin.Options) { po.Logger = slog.New(slog.NewJSONHandler(w, nil)) }
}

func withClock(now func() time.Time) envOption {
	return func(po *proxy.Options, _ *admin.Options) { po.Now = now }
}

func newEnv(t *testing.T, opts ...envOption) *env {
	t.Helper()
	dir := t.TempDir()
	ca, _, err := mitm.LoadOrCreateCA(filepath.Join(dir, "ca.pem"), filepath.Join(dir, "ca-key.pem"), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	keys, err := receipts.GenerateKey(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	st := memory.New()
	po := proxy.Options{Store: st, CA: ca, Rules: policy.DefaultRules(), HoldTTL: 10 * time.Minute, Metrics: proxy.NewMetrics(),
		Logger: slog.New(slog.NewJSONHandler(io.Discard, nil))}
	ao := admin.Options{Token: testToken}
	for _, f := range opts {
		f(&po, &ao)
	}
	po.Decider = preflight.New(preflight.Options{Rules: po.Rules, Signer: keys, Now: time.Now})
	p, err := proxy.New(po)
	if err != nil {
		t.Fatal(err)
	}
	ao.Holds, ao.CACert, ao.Logger, ao.Now, ao.Metrics = st, ca.Certificate[0], po.Logger, po.Now, po.Metrics.Handler()
	srv := httptest.NewServer(admin.New(p, ao))
	t.Cleanup(func() { srv.Close(); p.Close() })
	return &env{t: t, core: p, store: st, ca: ca, url: srv.URL}
}

// hold writes a pending $0.50 hold created now (by clock), expiring in 10 minutes, and returns its id.
func (e *env) hold(id string, now time.Time) string {
	e.t.Helper()
	h := store.Hold{ID: id, Status: store.HoldPending, Key: "key-" + id, Method: "GET", URL: "https://seller.example/report",
		AmountMicros: 500_000, CreatedAt: now, ExpiresAt: now.Add(10 * time.Minute)}
	if err := e.store.CreateHold(e.t.Context(), h); err != nil {
		e.t.Fatal(err)
	}
	return id
}

func (e *env) holdStatus(id string) string {
	e.t.Helper()
	h, err := e.store.GetHold(e.t.Context(), id)
	if err != nil {
		e.t.Fatal(err)
	}
	return h.Status
}

// api calls the admin API; token "" sends no Authorization header.
func (e *env) api(method, path, token string, body any) (int, []byte) {
	e.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, e.url+path, rd)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// raw sends one request exactly as written (request target, headers) to the admin listener, so that no
// client cleans the path or fills in the Host.
func (e *env) raw(request string) (int, string) {
	e.t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(e.url, "http://"))
	if err != nil {
		e.t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte(request)); err != nil {
		e.t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	buf := make([]byte, 512)
	n, _ := resp.Body.Read(buf)
	return resp.StatusCode, resp.Header.Get("Location") + " " + string(buf[:n])
}

// lockedBuffer collects log output from concurrent handlers.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// consoleClient is a browser-like client of the console: a cookie jar, the same Origin as the page.
type consoleClient struct {
	t      *testing.T
	base   string
	client *http.Client
	csrf   string
}

func newConsoleClient(t *testing.T, base string) *consoleClient {
	jar, _ := cookiejar.New(nil)
	return &consoleClient{t: t, base: base, client: &http.Client{Jar: jar}}
}

// newConsoleClientFrom is newConsoleClient whose connections come from the loopback address local.
func newConsoleClientFrom(t *testing.T, base, local string) *consoleClient {
	c := newConsoleClient(t, base)
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}}
	c.client.Transport = &http.Transport{DialContext: d.DialContext}
	return c
}

// post sends JSON; hdr adds or replaces headers (Origin defaults to the console's own; "" removes one).
func (c *consoleClient) post(path string, body any, hdr map[string]string) (int, []byte) {
	c.t.Helper()
	code, out, _ := c.postH(path, body, hdr)
	return code, out
}

// postH is post that also returns the response headers.
func (c *consoleClient) postH(path string, body any, hdr map[string]string) (int, []byte, http.Header) {
	c.t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest("POST", c.base+path, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Origin", c.base)
	if c.csrf != "" {
		req.Header.Set("X-CSRF-Token", c.csrf)
	}
	for k, v := range hdr {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := c.client.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, out, resp.Header
}

func (c *consoleClient) get(path string) (*http.Response, []byte) {
	c.t.Helper()
	resp, err := c.client.Get(c.base + path)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp, out
}

func (c *consoleClient) signIn(token string) int {
	c.t.Helper()
	code, out := c.post("/console/session", map[string]string{"token": token}, nil)
	if code == 200 {
		var s struct{ CSRF string }
		_ = json.Unmarshal(out, &s)
		c.csrf = s.CSRF
	}
	return code
}

// holds is GET /v1/holds?status=, in the one hold view.
func (e *env) holds(status string) []view.Hold {
	e.t.Helper()
	code, b := e.api("GET", "/v1/holds?status="+status, testToken, nil)
	if code != 200 {
		e.t.Fatalf("list holds: %d %s", code, b)
	}
	var out struct{ Holds []view.Hold }
	if err := json.Unmarshal(b, &out); err != nil {
		e.t.Fatal(err)
	}
	return out.Holds
}
