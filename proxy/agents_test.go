package proxy

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/payguard/payguard/internal/testredis"
	"github.com/payguard/payguard/policy"
	"github.com/payguard/payguard/preflight"
	"github.com/payguard/payguard/proxy/admin"
	"github.com/payguard/payguard/proxy/mitm"
	"github.com/payguard/payguard/proxy/view"
	"github.com/payguard/payguard/receipts"
	"github.com/payguard/payguard/screening/screeningtest"
	"github.com/payguard/payguard/store/memory"
	"github.com/payguard/payguard/store/redis"
	"github.com/payguard/payguard/x402"
)

// agentFixture builds proxies whose rule sets have agents, each agent decided by the real engine.
type agentFixture struct {
	t    *testing.T
	keys *receipts.KeySet
	ca   *tls.Certificate
}

func newAgentFixture(t *testing.T) *agentFixture {
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
	return &agentFixture{t: t, keys: keys, ca: ca}
}

func (f *agentFixture) engine(r policy.Rules) Decider {
	return preflight.New(preflight.Options{Rules: r, Signer: f.keys, Sanctions: screeningtest.Listed(sanctionedPayTo)})
}

func (f *agentFixture) ruleSet(c RuleSetConfig) *RuleSet {
	f.t.Helper()
	rs, err := NewRuleSet(c, nil, f.engine)
	if err != nil {
		f.t.Fatal(err)
	}
	return rs
}

func (f *agentFixture) proxy(st State, rs *RuleSet, mod func(*Options)) *Proxy {
	f.t.Helper()
	o := Options{Store: st, CA: f.ca, Rules: rs.rules, Decider: f.engine(rs.rules), RuleSet: rs, HoldTTL: 10 * time.Minute,
		Logger: slog.New(slog.NewJSONHandler(io.Discard, nil))}
	if mod != nil {
		mod(&o)
	}
	p, err := New(o)
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(p.Close)
	return p
}

func secretHash(s string) [32]byte { return sha256.Sum256([]byte(s)) }

func basicAuth(id, secret string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(id+":"+secret))
}

const cent402URL = "https://127.0.0.1:18443/402"

// decideAs decides the one-cent challenge for agent id, with a ticket as an intercepted 402 gets.
func decideAs(p *Proxy, id string) verdict {
	return p.decide(withAgent(context.Background(), id), http.MethodGet, cent402URL, mustParse(benchChallenge), true)
}

func mustParse(s string) *x402.PaymentRequired {
	pr, err := x402.ParsePaymentRequired([]byte(s))
	if err != nil {
		panic(err)
	}
	return pr
}

// Proxy-Authorization decides who an agent is: a plain HTTP request without it is refused with 407 when
// unauthenticated agents are refused; a wrong secret is refused even when they are let in (never downgraded
// to the default identity); the right one passes, and the header never reaches the upstream.
func TestAgentProxyAuthorization(t *testing.T) {
	f := newAgentFixture(t)
	var seen atomic.Value
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen.Store(r.Header.Get("Proxy-Authorization") + "|")
		w.Write([]byte("ok"))
	}))
	defer up.Close()
	agents := []AgentConfig{{ID: "research", SecretSHA256: secretHash("s3cret")}}
	for _, refuse := range []bool{true, false} {
		rs := f.ruleSet(RuleSetConfig{Hash: "h", Rules: testRules(), Agents: agents, RefuseUnauthenticated: refuse})
		p := f.proxy(memory.New(), rs, nil)
		srv := httptest.NewServer(p)
		get := func(auth string) int {
			pu, _ := url.Parse(srv.URL)
			tr := &http.Transport{Proxy: http.ProxyURL(pu), ProxyConnectHeader: http.Header{}}
			defer tr.CloseIdleConnections()
			req, _ := http.NewRequest(http.MethodGet, up.URL, nil)
			if auth != "" {
				req.Header.Set("Proxy-Authorization", auth)
			}
			seen.Store("")
			resp, err := tr.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			return resp.StatusCode
		}
		noneWant := http.StatusOK
		if refuse {
			noneWant = http.StatusProxyAuthRequired
		}
		if got := get(""); got != noneWant {
			t.Errorf("refuse=%v, no credentials: %d, want %d", refuse, got, noneWant)
		}
		for _, bad := range []string{basicAuth("research", "wrong"), basicAuth("nobody", "s3cret"), "Bearer s3cret", "Basic !!!"} {
			if got := get(bad); got != http.StatusProxyAuthRequired {
				t.Errorf("refuse=%v, %q: %d, want 407", refuse, bad, got)
			}
		}
		if got := get(basicAuth("research", "s3cret")); got != http.StatusOK {
			t.Errorf("refuse=%v, right secret: %d, want 200", refuse, got)
		}
		if s, _ := seen.Load().(string); s != "|" {
			t.Errorf("Proxy-Authorization reached the upstream: %q", s)
		}
		srv.Close()
	}
}

// A CONNECT without valid credentials is answered 407 before any TLS; with them, the MITM'd requests inside
// the tunnel are decided as that agent.
func TestAgentConnectAuthorization(t *testing.T) {
	f := newAgentFixture(t)
	rs := f.ruleSet(RuleSetConfig{Hash: "h", Rules: testRules(), RefuseUnauthenticated: true,
		Agents: []AgentConfig{{ID: "research", SecretSHA256: secretHash("s3cret")}}})
	p := f.proxy(memory.New(), rs, nil)
	srv := httptest.NewServer(p)
	defer srv.Close()
	pu, _ := url.Parse(srv.URL)
	tr := &http.Transport{Proxy: http.ProxyURL(pu)}
	defer tr.CloseIdleConnections()
	_, err := tr.RoundTrip(httptest.NewRequest(http.MethodGet, "https://example.test/", nil).WithContext(context.Background()))
	if err == nil || !containsAny(err.Error(), "Proxy Authentication Required", "407") {
		t.Fatalf("CONNECT without credentials: %v, want a 407", err)
	}
	if counterValue(t, p.metrics.agentRefused) < 1 {
		t.Error("the refusal was not counted")
	}
}

func containsAny(s string, subs ...string) bool {
	for _, x := range subs {
		if strings.Contains(s, x) {
			return true
		}
	}
	return false
}

// An agent's own cap is exact under concurrency: of 40 concurrent one-cent decisions under a five-cent cap,
// exactly five are allowed; the global cap still binds the sum of two agents with caps of their own.
func TestAgentCapsExactUnderConcurrency(t *testing.T) {
	f := newAgentFixture(t)
	testAgentCaps(t, f, func() State { return memory.New() }, 1)
}

// Across a two-proxy fleet on Redis: two proxies share the store, and the caps hold over both.
func TestAgentCapsExactAcrossFleetOnRedis(t *testing.T) {
	f := newAgentFixture(t)
	u := testredis.URL(t)
	prefix := fmt.Sprintf("payguard-agents-test-%d-%d:", os.Getpid(), time.Now().UnixNano())
	var first *redis.Store
	open := func() State {
		st, err := redis.Open(t.Context(), redis.Options{URL: u, Prefix: prefix, AllowVolatile: true, InitIfEmpty: true})
		if err != nil {
			t.Fatalf("redis: %v", err)
		}
		if first == nil {
			first = st
			t.Cleanup(func() { dropPrefix(t, st, prefix); st.Close() })
		} else {
			t.Cleanup(func() { st.Close() })
		}
		return st
	}
	testAgentCaps(t, f, open, 2)
}

func testAgentCaps(t *testing.T, f *agentFixture, open func() State, proxies int) {
	rules := testRules()
	rules.DailyCapUSD = 7 * 10_000 // seven cents for everyone together
	rs := f.ruleSet(RuleSetConfig{Hash: "h", Rules: rules, Agents: []AgentConfig{
		{ID: "small", SecretSHA256: secretHash("a"), DailyCapUSD: 5 * 10_000},
		{ID: "big1", SecretSHA256: secretHash("b"), DailyCapUSD: 100 * 10_000},
		{ID: "big2", SecretSHA256: secretHash("c"), DailyCapUSD: 100 * 10_000},
	}})
	var ps []*Proxy
	var st State
	for i := 0; i < proxies; i++ {
		s := open()
		if st == nil {
			st = s
		}
		ps = append(ps, f.proxy(s, rs, nil))
	}
	run := func(n int, agents ...string) map[string]int {
		var mu sync.Mutex
		allowed := map[string]int{}
		var wg sync.WaitGroup
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				a := agents[i%len(agents)]
				v := decideAs(ps[i%len(ps)], a)
				if v.Decision == allow {
					mu.Lock()
					allowed[a]++
					mu.Unlock()
				} else if v.Class != "agent_daily_cap" && v.Class != "daily_cap" {
					t.Errorf("%s: %s %v", a, v.Decision, v.Reasons)
				}
			}(i)
		}
		wg.Wait()
		return allowed
	}
	if got := run(40, "small"); got["small"] != 5 {
		t.Fatalf("agent cap of 5 cents: %d one-cent decisions allowed", got["small"])
	}
	day := time.Now().UTC().Format("2006-01-02")
	as, _ := st.State(context.Background(), ps[0].agentBudget("small"), day)
	if as.Spent+as.Reserved != 5*10_000 {
		t.Errorf("small's ledger: %+v", as)
	}
	// Two cents of global room are left; big1 and big2 race for them.
	got := run(40, "big1", "big2")
	if got["big1"]+got["big2"] != 2 {
		t.Fatalf("global cap: %v allowed beyond small's five, want 2", got)
	}
	gs, _ := st.State(context.Background(), "default", day)
	if gs.Spent+gs.Reserved != 7*10_000 {
		t.Errorf("global ledger: %+v", gs)
	}
	// The agents' reservations the global cap refused were given back: their ledgers hold what passed.
	for _, a := range []string{"big1", "big2"} {
		s, _ := st.State(context.Background(), ps[0].agentBudget(a), day)
		if s.Spent+s.Reserved != int64(got[a])*10_000 {
			t.Errorf("%s's ledger %+v, allowed %d", a, s, got[a])
		}
	}
}

// An agent's allowed challenge carries its agent id and the config hash in the input its receipt binds.
func TestAgentIDInReceiptContext(t *testing.T) {
	f := newAgentFixture(t)
	j, path := openTestJournal(t, 1<<20, 2)
	rs := f.ruleSet(RuleSetConfig{Hash: "cfg-1", Rules: testRules(), Agents: []AgentConfig{{ID: "research", SecretSHA256: secretHash("x")}}})
	p := f.proxy(memory.New(), rs, func(o *Options) { o.Journal = j })
	if v := decideAs(p, "research"); v.Decision != allow || v.Agent != "research" {
		t.Fatalf("%s %v agent %q", v.Decision, v.Reasons, v.Agent)
	}
	j.Close()
	entries := readJournal(t, path)
	if len(entries) != 1 || entries[0].Agent != "research" || entries[0].ConfigSHA256 != "cfg-1" {
		t.Fatalf("journal: %+v", entries)
	}
	in := string(entries[0].Input)
	if !containsAny(in, `"agent_id":"research"`) || !containsAny(in, `"config_sha256":"cfg-1"`) {
		t.Errorf("input context: %s", in)
	}
}

// An agent's rule override may only tighten.
func TestAgentRulesMayOnlyTighten(t *testing.T) {
	base := testRules()
	tight := base.Clone()
	tight.MaxPerPaymentUSD = base.MaxPerPaymentUSD / 2
	tight.DomainBlocklist = []string{"evil.example"}
	if err := CheckTightens(base, tight); err != nil {
		t.Errorf("tightening refused: %v", err)
	}
	loosen := []func(r *policy.Rules){
		func(r *policy.Rules) { r.MaxPerPaymentUSD *= 2 },
		func(r *policy.Rules) { r.ScreenSanctions = false },
		func(r *policy.Rules) { r.AllowedNetworks = append(r.AllowedNetworks, "eip155:1") },
		func(r *policy.Rules) { r.DomainAllowlist = []string{"shop.example"} },
		func(r *policy.Rules) { r.MaxPriceMultiple = nil },
		func(r *policy.Rules) { r.NewDomainDays = 0 },
	}
	for i, mod := range loosen {
		r := base.Clone()
		mod(&r)
		if CheckTightens(base, r) == nil {
			t.Errorf("loosening %d accepted", i)
		}
		_, err := NewRuleSet(RuleSetConfig{Rules: base, Agents: []AgentConfig{{ID: "a", SecretSHA256: secretHash("x"), Rules: &r}}},
			nil, func(policy.Rules) Decider { return nil })
		if err == nil {
			t.Errorf("rule set with loosening %d built", i)
		}
	}
	// A tightened agent is decided under its own rules: a one-cent payment above its max is blocked.
	f := newAgentFixture(t)
	strict := base.Clone()
	strict.MaxPerPaymentUSD = 5_000
	rs := f.ruleSet(RuleSetConfig{Hash: "h", Rules: base, Agents: []AgentConfig{{ID: "strict", SecretSHA256: secretHash("x"), Rules: &strict}}})
	p := f.proxy(memory.New(), rs, nil)
	if v := decideAs(p, "strict"); v.Decision != block {
		t.Errorf("strict agent: %s %v", v.Decision, v.Reasons)
	}
	if v := decideAs(p, DefaultAgent); v.Decision != allow {
		t.Errorf("default agent: %s %v", v.Decision, v.Reasons)
	}
}

// A hold names its agent: in the store, the approval API and the webhook payload.
func TestHoldNamesItsAgent(t *testing.T) {
	f := newAgentFixture(t)
	holding := testRules()
	holding.HoldAboveUSD = 5_000
	rs := f.ruleSet(RuleSetConfig{Hash: "h", Rules: testRules(), Agents: []AgentConfig{{ID: "research", SecretSHA256: secretHash("x"), Rules: &holding}}})
	st := memory.New()
	p := f.proxy(st, rs, nil)
	v := p.decideChallenge(withAgent(context.Background(), "research"), http.MethodGet, cent402URL, mustParse(benchChallenge), nil)
	if v.Decision != hold || v.Hold == nil {
		t.Fatalf("%s %v", v.Decision, v.Reasons)
	}
	holds, _ := st.ListHolds(context.Background(), "")
	if len(holds) != 1 || holds[0].Agent != "research" {
		t.Fatalf("holds: %+v", holds)
	}
	if got := view.HoldOf(holds[0], time.Now()).Agent; got != "research" {
		t.Errorf("webhook hold agent %q", got)
	}
	admin := httptest.NewServer(adminFor(p, admin.Options{Token: testToken}))
	defer admin.Close()
	req, _ := http.NewRequest(http.MethodGet, admin.URL+"/v1/holds", nil)
	req.Header.Set("Authorization", "Bearer "+testToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(b), `"agent":"research"`) {
		t.Errorf("/v1/holds: %s", b)
	}
}

// The in-process guard's sidecar call names its agent as the proxy does: the decision is that agent's
// (its rules, its journal line), wrong credentials get 407, none are the default identity.
func TestGuardDecideAsAgent(t *testing.T) {
	f := newAgentFixture(t)
	j, path := openTestJournal(t, 1<<20, 2)
	strict := testRules()
	strict.MaxPerPaymentUSD = 5_000
	rs := f.ruleSet(RuleSetConfig{Hash: "h", Rules: testRules(), Agents: []AgentConfig{{ID: "research", SecretSHA256: secretHash("s3cret"), Rules: &strict}}})
	p := f.proxy(memory.New(), rs, func(o *Options) { o.Journal = j })
	admin := httptest.NewServer(adminFor(p, admin.Options{Token: testToken, DecideToken: "decide-only-token-0123456789"}))
	defer admin.Close()
	pr := mustParse(benchChallenge)
	raw, _ := json.Marshal(pr)
	body := fmt.Sprintf(`{"url":%q,"challenge":%s}`, cent402URL, raw)
	call := func(auth string) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, admin.URL+"/v1/decide", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer decide-only-token-0123456789")
		if auth != "" {
			req.Header.Set("Proxy-Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, b := call(basicAuth("research", "s3cret")); code != 200 || !strings.Contains(b, `"decision":"block"`) {
		t.Errorf("research (strict rules): %d %s", code, b)
	}
	if code, _ := call(basicAuth("research", "wrong")); code != http.StatusProxyAuthRequired {
		t.Errorf("wrong secret: %d, want 407", code)
	}
	if code, b := call(""); code != 200 || !strings.Contains(b, `"decision":"allow"`) {
		t.Errorf("default agent: %d %s", code, b)
	}
	j.Close()
	entries := readJournal(t, path)
	if len(entries) != 2 || entries[0].Agent != "research" || entries[1].Agent != DefaultAgent {
		t.Errorf("journal agents: %+v", entries)
	}
}

// An HTTPS agent authenticates on the CONNECT; the 402 MITM'd inside the tunnel is decided as that agent.
func TestAgentMITMDecidedAsConnectAgent(t *testing.T) {
	f := newAgentFixture(t)
	j, path := openTestJournal(t, 1<<20, 2)
	s := newSeller(t, x402.V2, true, offer(x402.V2, "eip155:84532", baseSepoliaUSDC, sellerPayTo, "10000"))
	rs := f.ruleSet(RuleSetConfig{Hash: "h", Rules: testRules(), RefuseUnauthenticated: true,
		Agents: []AgentConfig{{ID: "research", SecretSHA256: secretHash("s3cret")}}})
	pool := x509.NewCertPool()
	pool.AddCert(s.srv.Certificate())
	p := f.proxy(memory.New(), rs, func(o *Options) { o.Journal = j; o.UpstreamRoots = pool })
	srv := httptest.NewServer(p)
	defer srv.Close()
	caPool := x509.NewCertPool()
	caPool.AddCert(f.ca.Leaf)
	pu, _ := url.Parse(srv.URL)
	pu.User = url.UserPassword("research", "s3cret")
	tr := &http.Transport{Proxy: http.ProxyURL(pu), TLSClientConfig: &tls.Config{RootCAs: caPool}}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Get(s.url("/paid"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusPaymentRequired || resp.Header.Get(HeaderDecision) != allow {
		t.Fatalf("402 through an authenticated tunnel: %d %v", resp.StatusCode, resp.Header)
	}
	j.Close()
	if e := readJournal(t, path); len(e) != 1 || e[0].Agent != "research" {
		t.Errorf("journal: %+v", e)
	}
}

// An agent's reservation follows its payment: the paid retry that takes the global ticket takes the agent's
// twin, and the settlement commits both; an untaken twin is a lease like the global ticket's.
func TestAgentReservationSettlesWithPayment(t *testing.T) {
	f := newAgentFixture(t)
	rs := f.ruleSet(RuleSetConfig{Hash: "h", Rules: testRules(), Agents: []AgentConfig{{ID: "research", SecretSHA256: secretHash("x"), DailyCapUSD: 50_000}}})
	st := memory.New()
	p := f.proxy(st, rs, nil)
	v := decideAs(p, "research")
	if v.Decision != allow || v.Release == nil || v.Release.AgentReservationID == "" {
		t.Fatalf("%s %+v", v.Decision, v.Release)
	}
	ctx := context.Background()
	key, _ := ticketKey(http.MethodGet, cent402URL, "exact", "eip155:84532", "0xf54127927F219FB78C8D1A1fF3D7dc6D7f70C98E", "10000")
	tk, err := st.TakeTicket(ctx, key, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	paid := p.matchTicket(tk, terms{version: x402.V1, network: "eip155:84532"})
	p.takeAgentTwin(ctx, &paid, tk)
	if paid.Release == nil || paid.Release.AgentReservationID != v.Release.AgentReservationID {
		t.Fatalf("the payment's release does not carry the agent's reservation: %+v", paid.Release)
	}
	p.commitSettlement(ctx, paid.Release, &x402.SettleResponse{Success: true}, nil)
	day := time.Now().UTC().Format("2006-01-02")
	a, _ := st.State(ctx, p.agentBudget("research"), day)
	g, _ := st.State(ctx, "default", day)
	if a.Spent != 10_000 || a.Reserved != 0 || g.Spent != 10_000 || g.Reserved != 0 {
		t.Errorf("after settlement: agent %+v, global %+v", a, g)
	}
}

// The metrics show each capped agent's spend, reservation and cap (the dashboard's "spend vs cap per agent"),
// and nothing for an agent without a cap of its own.
func TestAgentSpendGauges(t *testing.T) {
	f := newAgentFixture(t)
	rs := f.ruleSet(RuleSetConfig{Hash: "h", Rules: testRules(), Agents: []AgentConfig{
		{ID: "research", SecretSHA256: secretHash("x"), DailyCapUSD: 50_000},
		{ID: "uncapped", SecretSHA256: secretHash("y")},
	}})
	p := f.proxy(memory.New(), rs, nil)
	if v := decideAs(p, "research"); v.Decision != allow {
		t.Fatalf("%s %v", v.Decision, v.Result.Reasons)
	}
	rec := httptest.NewRecorder()
	p.metrics.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	body := rec.Body.String()
	for _, want := range []string{
		`payguard_agent_usd_cap{agent="research"} 0.05`,
		`payguard_agent_usd_reserved_today{agent="research"} 0.01`,
		`payguard_agent_usd_spent_today{agent="research"} 0`,
	} {
		if !strings.Contains(body, want+"\n") {
			t.Errorf("metrics lack %q", want)
		}
	}
	if strings.Contains(body, `agent="uncapped"`) {
		t.Errorf("an agent without a cap of its own has a cap gauge")
	}
}
