package proxy

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/payguard/payguard/index"
	"github.com/payguard/payguard/index/probe"
	"github.com/payguard/payguard/internal/testredis"
	"github.com/payguard/payguard/internal/testutil"
	"github.com/payguard/payguard/store"
	"github.com/payguard/payguard/store/memory"
	"github.com/payguard/payguard/store/redis"
	"github.com/payguard/payguard/x402"
)

// The attacks of issue 30 on the Endpoint Index, through the proxy as they were run.

// weatherBazaar is the discovery metadata of a seller declaring category "weather".
var weatherBazaar = json.RawMessage(`{"info":{"category":"weather","input":{"type":"http","method":"GET"}}}`)

// sellerHandler is a seller's x402 handler (verify and settle as seller does) without a server of its own.
func sellerHandler(payTo, amount string) *seller {
	return &seller{version: x402.V2, nonces: map[string]bool{}, bazaar: weatherBazaar,
		offers: []x402.Requirement{offer(x402.V2, "eip155:8453", baseUSDC, payTo, amount)}}
}

// serveOn starts h on host (a loopback address of its own: another site) and returns its base URL.
func serveOn(t *testing.T, host string, h http.Handler) string {
	t.Helper()
	l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		t.Fatalf("listening on %s: %v", host, err)
	}
	srv := httptest.NewUnstartedServer(h)
	srv.Listener.Close()
	srv.Listener = l
	srv.Start()
	t.Cleanup(srv.Close)
	return srv.URL
}

// A seller with a payee-A history at /weather (paid once) swaps its payee: /weather now answers 302 to
// another spelling of itself, or to another URL of its site, whose 402 names payee B. Every one is held
// (endpoint_payto_changed) and B is never paid. On the previous main each variant was a new endpoint with
// no history: allowed and paid, five times.
func TestPayeeSwapBehindARedirectIsHeld(t *testing.T) {
	st := memory.New()
	h := newHarness(t, st, testRules(), withIndex(t, st))
	honest, swapped := sellerHandler(sellerPayTo, "10000"), sellerHandler(otherPayTo, "10000")
	var hijacked atomic.Bool
	var variant atomic.Value // string: where /weather redirects once hijacked
	var base string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case !hijacked.Load():
			honest.ServeHTTP(w, r)
		case r.RequestURI == "/weather" && r.Host == strings.TrimPrefix(base, "http://"):
			http.Redirect(w, r, variant.Load().(string), http.StatusFound)
		default:
			swapped.ServeHTTP(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	base = srv.URL
	port := srv.URL[strings.LastIndex(srv.URL, ":")+1:]

	b := h.buyer()
	if ex := b.pay(base+"/weather", nil); ex.paid == nil || ex.paid.StatusCode != http.StatusOK {
		t.Fatalf("the honest payment: %+v", ex.first)
	}
	waitObservations(t, st, base+"/weather", 2)

	hijacked.Store(true)
	for _, v := range []string{base + "/weather/", base + "/%77eather", base + "/Weather", base + "/weather;x",
		"http://[::ffff:127.0.0.1]:" + port + "/weather", base + "/weather2"} {
		variant.Store(v)
		ex := b.pay(base+"/weather", nil)
		if ex.first.StatusCode == http.StatusPaymentRequired {
			t.Errorf("redirect to %s: the 402 naming payee B reached the agent (paid: %v)", v, ex.paid != nil && ex.paid.StatusCode == 200)
			continue
		}
		r := decodeRefusal(t, ex.first, ex.firstBody)
		if r.Decision != hold || !hasReason(r.Reasons, "hold: endpoint_payto_changed: ") {
			t.Errorf("redirect to %s: %s %q", v, r.Decision, r.Reasons)
		}
		if v == base+"/weather2" && !hasReason(r.Reasons, "hold: endpoint_payto_changed: payTo "+otherPayTo+" is new at site 127.0.0.1 for eip155:8453/") {
			t.Errorf("another URL of the site: %q", r.Reasons)
		}
	}
	if n := swapped.paid.Load(); n != 0 {
		t.Fatalf("payee B was paid %d times", n)
	}
}

// The attack on the category median, as run: three 402s declaring "weather" at $0.0001 from three other
// addresses, each fetched once through the proxy and never paid, must not make an honest seller's next
// payment a hold. On the previous main they formed a category median of $0.0001 (three other sites), and
// the honest $0.01 was "more than 5x the median".
func TestUnpaidChallengesDoNotMoveTheCategoryMedian(t *testing.T) {
	st := memory.New()
	h := newHarness(t, st, testRules(), withIndex(t, st))
	b := h.buyer()
	honest := sellerHandler(sellerPayTo, "10000")
	honestURL := serveOn(t, "127.0.0.1", honest) + "/weather"
	if ex := b.pay(honestURL, nil); ex.paid == nil || ex.paid.StatusCode != http.StatusOK {
		t.Fatalf("the honest seller's first payment: %d %s", ex.first.StatusCode, ex.firstBody)
	}
	waitObservations(t, st, honestURL, 2)

	for _, host := range []string{"127.0.0.2", "127.0.0.3", "127.0.0.4"} {
		u := serveOn(t, host, sellerHandler(otherPayTo, "100")) + "/weather"
		if resp, body := b.get(u, nil); resp.StatusCode != http.StatusPaymentRequired {
			t.Fatalf("the cheap 402 of %s: %d %s", host, resp.StatusCode, body)
		}
		waitObservations(t, st, u, 1)
	}
	// The honest seller's next payment, through a proxy on the same store whose cache is fresh: what any
	// replica sees once index.DefaultCacheTTL+StaleFor have passed (this harness's cache keeps the sample
	// it read at the first 402 for a minute).
	later := newHarness(t, st, testRules(), withIndex(t, st))
	ex := later.buyer().pay(honestURL, nil)
	if ex.first.StatusCode != http.StatusPaymentRequired {
		r := decodeRefusal(t, ex.first, ex.firstBody)
		t.Fatalf("the honest seller's next payment: %s %q", r.Decision, r.Reasons)
	}
	if ex.paid == nil || ex.paid.StatusCode != http.StatusOK || honest.paid.Load() != 2 {
		t.Fatalf("the honest seller's next payment was not delivered: %+v", ex.paid)
	}
	waitObservations(t, st, honestURL, 4)
	if sample, err := st.CategoryPrices(context.Background(), "weather"); err != nil || len(sample) != 1 || sample[0].URL != honestURL {
		t.Fatalf("category sample: %v %+v (want only the honest seller's settled payment)", err, sample)
	}
}

// require_live: three failed GET probes of a POST-only endpoint (it answers GET with 405) say nothing
// about POST, so the agent's first POST is not held. On the previous main the POST, having no observation
// of its own, was judged on every method's, and the failed GET probes held it (endpoint_failed_last_3).
func TestFailedGetProbesDoNotHoldAPost(t *testing.T) {
	st := memory.New()
	rules := testRules()
	rules.RequireLive = true
	h := newHarness(t, st, rules, withIndex(t, st))
	pay := sellerHandler(sellerPayTo, "10000")
	u := serveOn(t, "127.0.0.1", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.Error(w, "POST only", http.StatusMethodNotAllowed)
			return
		}
		pay.ServeHTTP(w, r)
	})) + "/summarize"

	w := index.NewWriter(st, index.WriterOptions{})
	p := probe.New(probe.Options{Endpoints: []string{u}, Guard: probe.Guard{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}},
		Observer: w})
	for i := 0; i < 3; i++ {
		if obs := p.Round(context.Background()); len(obs) != 1 || obs[0].Usable {
			t.Fatalf("probe %d: %+v", i, obs)
		}
	}
	w.Close()
	if obs := waitObservations(t, st, u, 3); len(obs) != 3 || obs[2].Source != store.SourceProbe {
		t.Fatalf("probes: %+v", obs)
	}
	resp, body := h.buyer().do(http.MethodPost, u, nil)
	if resp.StatusCode != http.StatusPaymentRequired {
		r := decodeRefusal(t, resp, body)
		t.Fatalf("the first POST of a POST-only endpoint: %s %q", r.Decision, r.Reasons)
	}
}

// A fleet on one Redis shares the site payee record: payee A seen at /weather through replica A, payee B at
// another URL of the site through replica B is held there as new at the site.
func TestFleetSharesTheSitePayees(t *testing.T) {
	u := testredis.URL(t)
	prefix := "payguard-test-sitepayees:" + store.NewID()[:12] + ":"
	open := func() *redis.Store {
		st, err := redis.Open(context.Background(), redis.Options{URL: u, Prefix: prefix, AllowVolatile: true, InitIfEmpty: true})
		if err != nil {
			t.Fatalf("opening the fleet's Redis at %s: %v", u, err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	}
	stA, stB := open(), open()
	t.Cleanup(func() { deletePrefix(t, u, prefix) })
	a := newHarness(t, stA, testRules(), withIndex(t, stA))
	b := newHarness(t, stB, testRules(), withIndex(t, stB))
	s := newMutableSeller(t, sellerPayTo, "10000")
	if resp, body := a.buyer().get(s.srv.URL+"/weather", nil); resp.StatusCode != http.StatusPaymentRequired {
		t.Fatalf("through proxy A: %d %s", resp.StatusCode, body)
	}
	waitObservations(t, stB, s.srv.URL+"/weather", 1)
	testutil.Eventually(t, 10*time.Second, func() bool {
		e, _ := stB.SitePayees(context.Background(), "127.0.0.1")
		return len(e) > 0
	}, "the site payee record written")
	s.payTo.Store(otherPayTo)
	resp, body := b.buyer().get(s.srv.URL+"/forecast", nil)
	r := decodeRefusal(t, resp, body)
	if r.Decision != hold || !hasReason(r.Reasons, "hold: endpoint_payto_changed: payTo "+otherPayTo+" is new at site 127.0.0.1") {
		t.Fatalf("through proxy B: %s %q", r.Decision, r.Reasons)
	}
}
