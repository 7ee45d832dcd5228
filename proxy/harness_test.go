package proxy

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/payguard/payguard/internal/logout"
	"github.com/payguard/payguard/policy"
	"github.com/payguard/payguard/preflight"
	"github.com/payguard/payguard/proxy/admin"
	"github.com/payguard/payguard/proxy/mitm"
	"github.com/payguard/payguard/proxy/view"
	"github.com/payguard/payguard/receipts"
	"github.com/payguard/payguard/screening"
	"github.com/payguard/payguard/screening/screeningtest"
)

const testToken = "test-admin-token-0123456789"

// harness is payguard between a buyer and sellers: the real preflight engine and receipts, a store, the
// proxy on an httptest listener and the admin API on another.
type harness struct {
	t      *testing.T
	proxy  *Proxy
	store  State
	srv    *httptest.Server
	admin  *httptest.Server
	caPool *x509.CertPool
	rules  policy.Rules
	keys   *receipts.KeySet // the engine's receipt keys
	signs  *atomic.Int64    // receipts the proxy had signed
}

// testRules are SPEC §3's defaults with Base Sepolia allowed (the fixtures' network).
func testRules() policy.Rules {
	r := policy.DefaultRules()
	r.AllowedNetworks = []string{"eip155:8453", "base", "eip155:84532", "base-sepolia"}
	return r
}

// setup is what a harnessOption may change before the proxy is built.
type setup struct {
	Options
	admin     admin.Options // the admin listener's own settings (DecideToken, Hosts...)
	sanctions screening.Sanctions
	index     preflight.IndexReader // the engine's Endpoint Index (observe_test.go)
	domains   screening.Domains     // the engine's domain checker
}

type harnessOption func(*setup)

func withSanctions(s screening.Sanctions) harnessOption {
	return func(su *setup) { su.sanctions = s }
}

// withDomains gives the engine the domain checker d.
func withDomains(d screening.Domains) harnessOption {
	return func(su *setup) { su.domains = d }
}

func newHarness(t *testing.T, st State, rules policy.Rules, opts ...harnessOption) *harness {
	t.Helper()
	p, ca, keys := newTestProxy(t, st, rules, opts...)
	h := &harness{t: t, proxy: p, store: st, rules: rules, caPool: x509.NewCertPool(), keys: keys,
		signs: p.opts.Decider.(countingDecider).signs}
	h.caPool.AddCert(ca.Leaf)
	h.srv = httptest.NewServer(p)
	var su setup // the admin listener's settings the options name
	for _, f := range opts {
		f(&su)
	}
	su.admin.Token = testToken
	h.admin = httptest.NewServer(adminFor(p, su.admin))
	t.Cleanup(func() { h.srv.Close(); h.admin.Close(); p.Close() })
	return h
}

// newTestProxy is the proxy the harness and the benchmarks use: a fresh MITM CA and receipt key, the real
// preflight engine over the listed test sanctions (its receipt signatures counted), the log discarded.
func newTestProxy(tb testing.TB, st State, rules policy.Rules, opts ...harnessOption) (*Proxy, *tls.Certificate, *receipts.KeySet) {
	tb.Helper()
	dir := tb.TempDir()
	ca, _, err := mitm.LoadOrCreateCA(filepath.Join(dir, "ca.pem"), filepath.Join(dir, "ca-key.pem"), time.Now())
	if err != nil {
		tb.Fatal(err)
	}
	keys, err := receipts.GenerateKey(time.Now())
	if err != nil {
		tb.Fatal(err)
	}
	// The log as payguard proxy writes it (internal/logout: the decision line written by hand, buffered),
	// discarded.
	logOut := logout.NewWriter(io.Discard, logout.FlushDelay)
	tb.Cleanup(func() { logOut.Close() })
	su := setup{
		Options: Options{Store: st, CA: ca, Rules: rules, HoldWait: 0, HoldTTL: 10 * time.Minute,
			Logger: slog.New(logout.NewHandler(logOut, slog.LevelInfo))},
		sanctions: screeningtest.Listed(sanctionedPayTo),
	}
	for _, f := range opts {
		f(&su)
	}
	su.Decider = countingDecider{Engine: preflight.New(preflight.Options{Rules: rules, Signer: keys, Now: time.Now,
		Sanctions: su.sanctions, Index: su.index, Domains: su.domains}), signs: new(atomic.Int64)}
	p, err := New(su.Options)
	if err != nil {
		tb.Fatal(err)
	}
	return p, ca, keys
}

// countingDecider is the real engine, counting the receipts the proxy asks it to sign.
type countingDecider struct {
	*preflight.Engine
	signs *atomic.Int64
}

func (d countingDecider) SignReceipt(res *preflight.Result, in *preflight.Input) error {
	d.signs.Add(1)
	return d.Engine.SignReceipt(res, in)
}

// trustUpstream makes the proxy verify the httptest TLS sellers against their own certificate.
func trustUpstream(sellers ...*seller) harnessOption {
	return func(o *setup) {
		pool := x509.NewCertPool()
		for _, s := range sellers {
			if s.srv.Certificate() != nil {
				pool.AddCert(s.srv.Certificate())
			}
		}
		o.UpstreamRoots = pool
	}
}

// buyer returns a client that sends everything through the proxy and trusts payguard's CA (not the
// sellers' certificates: HTTPS must be MITM'd to work at all).
func (h *harness) buyer() *buyer {
	u, _ := url.Parse(h.srv.URL)
	tr := &http.Transport{Proxy: http.ProxyURL(u), TLSClientConfig: &tls.Config{RootCAs: h.caPool},
		MaxIdleConnsPerHost: 64}
	h.t.Cleanup(tr.CloseIdleConnections)
	return &buyer{t: h.t, client: &http.Client{Transport: tr, Timeout: time.Minute}}
}

// api calls the admin API; token "" sends no Authorization header.
func (h *harness) api(method, path, token string, body any) (int, []byte) {
	h.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, h.admin.URL+path, rd)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// adminFor is the admin listener over p as cmd/payguard composes it: o's listener settings, and what the
// admin side reads (the store's holds, the journal, the Index, the CA certificate) from p's options.
func adminFor(p *Proxy, o admin.Options) http.Handler {
	o.Holds = p.opts.Store
	if p.opts.Journal != nil {
		o.Journal = p.opts.Journal
	}
	o.Index, o.IndexMaxAge = p.opts.Index, p.opts.IndexMaxAge
	if p.opts.CA != nil && len(p.opts.CA.Certificate) > 0 {
		o.CACert = p.opts.CA.Certificate[0]
	}
	o.Logger, o.Now, o.Metrics = p.log, p.opts.Now, p.metrics.Handler()
	return admin.New(p, o)
}

func (h *harness) holds(status string) []view.Hold {
	h.t.Helper()
	code, b := h.api("GET", "/v1/holds?status="+status, testToken, nil)
	if code != 200 {
		h.t.Fatalf("list holds: %d %s", code, b)
	}
	var out struct{ Holds []view.Hold }
	if err := json.Unmarshal(b, &out); err != nil {
		h.t.Fatal(err)
	}
	return out.Holds
}

// budgetView is GET /v1/budget's body.
type budgetView struct {
	Budget         string `json:"budget"`
	Day            string `json:"day"`
	SpentUSD       string `json:"spent_usd"`
	ReservedUSD    string `json:"reserved_usd"`
	CapUSD         string `json:"cap_usd"`
	SpentMicros    int64  `json:"spent_micros"`
	ReservedMicros int64  `json:"reserved_micros"`
	CapMicros      int64  `json:"cap_micros"`
}

func (h *harness) budgetState() budgetView {
	h.t.Helper()
	code, b := h.api("GET", "/v1/budget", testToken, nil)
	if code != 200 {
		h.t.Fatalf("budget: %d %s", code, b)
	}
	var v budgetView
	if err := json.Unmarshal(b, &v); err != nil {
		h.t.Fatal(err)
	}
	return v
}

func decodeRefusal(t *testing.T, resp *http.Response, body []byte) refusalBody {
	t.Helper()
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("status = %d, want 403; body %s", resp.StatusCode, body)
	}
	var r refusalBody
	if err := json.Unmarshal(body, &r); err != nil {
		t.Fatalf("403 body is not JSON: %v: %s", err, body)
	}
	return r
}
