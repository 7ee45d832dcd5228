package proxy

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	neturl "net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/payguard/payguard/index"
	"github.com/payguard/payguard/internal/testredis"
	"github.com/payguard/payguard/internal/testutil"
	"github.com/payguard/payguard/policy"
	"github.com/payguard/payguard/preflight"
	"github.com/payguard/payguard/store"
	"github.com/payguard/payguard/store/memory"
	"github.com/payguard/payguard/store/redis"
	"github.com/payguard/payguard/x402"
)

// withIndex wires the Endpoint Index: the engine reads observations from st, and an index.Writer on st
// records what the proxy sees.
// It is wired as cmd/payguard wires it: the engine reads through a cache the proxy warms before the budget
// lock, and the cache takes nothing of a URL while the writer writes it.
func withIndex(t testing.TB, st store.Endpoints) harnessOption {
	return withIndexWriter(t, st, index.WriterOptions{Keep: store.Retention{MaxPerURL: 100, MaxAge: 30 * 24 * time.Hour}})
}

// withIndexWriter is withIndex with the writer's options given (the cache's write fence is added).
func withIndexWriter(t testing.TB, st store.Endpoints, wo index.WriterOptions) harnessOption {
	cache := index.NewCache(st, time.Minute) // long: only invalidation may make this process see its writes
	wo.Writing = cache.Writing
	w := index.NewWriter(st, wo)
	t.Cleanup(w.Close)
	return func(su *setup) {
		su.index = cache
		su.Observer, su.Index = w, cache
	}
}

// mutableSeller answers every request with a v2 402 whose payTo and amount the test can change between
// requests (a seller whose payee was hijacked, or who raised its price).
type mutableSeller struct {
	srv    *httptest.Server
	payTo  atomic.Value // string
	amount atomic.Value // string
}

func newMutableSeller(t *testing.T, payTo, amount string) *mutableSeller {
	s := &mutableSeller{}
	s.payTo.Store(payTo)
	s.amount.Store(amount)
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		pr := &x402.PaymentRequired{X402Version: x402.V2, Error: "payment required",
			Resource: &x402.ResourceInfo{URL: "http://" + r.Host + r.URL.Path},
			Accepts:  []x402.Requirement{offer(x402.V2, "eip155:8453", baseUSDC, s.payTo.Load().(string), s.amount.Load().(string))},
			Extensions: map[string]json.RawMessage{"bazaar": json.RawMessage(
				`{"info":{"category":"weather","input":{"type":"http","method":"GET"}},"schema":{"type":"object"}}`)}}
		h, err := x402.EncodeHeaderJSON(pr)
		if err != nil {
			t.Error(err)
		}
		w.Header().Set(x402.HeaderPaymentRequired, h)
		w.WriteHeader(http.StatusPaymentRequired)
		w.Write([]byte("{}"))
	}))
	t.Cleanup(s.srv.Close)
	return s
}

// waitObservations waits until st holds at least n observations of url (the writer is asynchronous).
func waitObservations(t *testing.T, st store.Endpoints, url string, n int) []store.Observation {
	t.Helper()
	key, err := index.NormalizeURL(url)
	if err != nil {
		t.Fatal(err)
	}
	var obs []store.Observation
	testutil.Eventually(t, 10*time.Second, func() bool {
		var err error
		if obs, err = st.Observations(context.Background(), key); err != nil {
			t.Fatal(err)
		}
		return len(obs) >= n
	}, "%d observations of %s written", n, key)
	return obs
}

// The attack: a seller's payee is swapped between two runs. The first 402 is allowed and observed; the second,
// naming another payTo for the same network and asset, is held with both addresses named.
func TestObservedPayToChangeHolds(t *testing.T) {
	st := memory.New()
	h := newHarness(t, st, testRules(), withIndex(t, st))
	s := newMutableSeller(t, sellerPayTo, "10000")
	u := s.srv.URL + "/weather"
	b := h.buyer()
	resp, body := b.get(u, nil)
	if resp.StatusCode != http.StatusPaymentRequired {
		t.Fatalf("first run: %d %s", resp.StatusCode, body)
	}
	obs := waitObservations(t, st, u, 1)
	if o := obs[0]; o.Source != store.SourceChallenge || o.Category != "weather" || len(o.Metadata) == 0 ||
		len(o.Offers) != 1 || o.Offers[0].PayTo != sellerPayTo {
		t.Fatalf("observation: %+v", o)
	}
	s.payTo.Store(otherPayTo)
	resp, body = b.get(u, nil)
	r := decodeRefusal(t, resp, body)
	if r.Decision != hold || !hasReason(r.Reasons, "hold: endpoint_payto_changed: payTo "+otherPayTo+" differs from "+
		strings.ToLower(sellerPayTo)) {
		t.Fatalf("second run: %s %q", r.Decision, r.Reasons)
	}
	if got := counterValue(t, h.proxy.metrics.indexRuleHits.WithLabelValues("hold_on_payto_change")); got != 1 {
		t.Fatalf("payguard_index_rule_hits_total{rule=hold_on_payto_change} = %v, want 1", got)
	}
	// Once observed, the new payee is the latest; the change itself still holds for SPEC's seven days.
	waitObservations(t, st, u, 2)
	resp, body = b.get(u, nil)
	r = decodeRefusal(t, resp, body)
	if r.Decision != hold || !hasReason(r.Reasons, "hold: endpoint_payto_changed: payTo changed from "+strings.ToLower(sellerPayTo)+
		" to "+strings.ToLower(otherPayTo)) {
		t.Fatalf("third run: %s %q", r.Decision, r.Reasons)
	}
}

func TestObservedPriceRaiseHolds(t *testing.T) {
	st := memory.New()
	h := newHarness(t, st, testRules(), withIndex(t, st))
	s := newMutableSeller(t, sellerPayTo, "10000")
	u := s.srv.URL + "/weather"
	b := h.buyer()
	if resp, body := b.get(u, nil); resp.StatusCode != http.StatusPaymentRequired {
		t.Fatalf("first run: %d %s", resp.StatusCode, body)
	}
	waitObservations(t, st, u, 1)
	s.amount.Store("100000") // 10x, still under every cap and the hold threshold
	resp, body := b.get(u, nil)
	r := decodeRefusal(t, resp, body)
	if r.Decision != hold || !hasReason(r.Reasons,
		"hold: endpoint_price_above_category_median: $0.1 is more than 5x the median $0.01 (own_history, 1 samples)") {
		t.Fatalf("10x price: %s %q", r.Decision, r.Reasons)
	}
}

// A payment the proxy releases is observed with the option paid and the seller's status.
func TestPaidResponseObserved(t *testing.T) {
	st := memory.New()
	h := newHarness(t, st, testRules(), withIndex(t, st))
	s := newSeller(t, x402.V2, false, offer(x402.V2, "eip155:84532", baseSepoliaUSDC, sellerPayTo, "10000"))
	ex := h.buyer().pay(s.url("/weather"), nil)
	if ex.paid == nil || ex.paid.StatusCode != http.StatusOK {
		t.Fatalf("payment not delivered: %+v", ex.paid)
	}
	obs := waitObservations(t, st, s.url("/weather"), 2)
	var paid *store.Observation
	for i := range obs {
		if obs[i].Source == store.SourcePaid {
			paid = &obs[i]
		}
	}
	if paid == nil || paid.Paid == nil || paid.Paid.PayTo != sellerPayTo || paid.Paid.Network != "eip155:84532" ||
		paid.Status != 200 || !paid.Usable {
		t.Fatalf("paid observation: %+v", obs)
	}
}

// A fleet: two proxies on one Redis share observations. The payee seen through one proxy, changed when the
// agent comes through the other, is held there.
func TestFleetSharesObservations(t *testing.T) {
	u := testredis.URL(t)
	prefix := "payguard-test-index:" + store.NewID()[:12] + ":"
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
	target := s.srv.URL + "/weather"
	if resp, body := a.buyer().get(target, nil); resp.StatusCode != http.StatusPaymentRequired {
		t.Fatalf("through proxy A: %d %s", resp.StatusCode, body)
	}
	waitObservations(t, stB, target, 1) // visible to B's store
	s.payTo.Store(otherPayTo)
	resp, body := b.buyer().get(target, nil)
	r := decodeRefusal(t, resp, body)
	if r.Decision != hold || !hasReason(r.Reasons, "hold: endpoint_payto_changed: payTo "+otherPayTo+" differs from "+strings.ToLower(sellerPayTo)) {
		t.Fatalf("through proxy B: %s %q", r.Decision, r.Reasons)
	}
}

func hasReason(reasons []string, prefix string) bool {
	for _, r := range reasons {
		if strings.HasPrefix(r, prefix) {
			return true
		}
	}
	return false
}

// deletePrefix removes this test's keys from the shared Redis (never a flush).
func deletePrefix(t *testing.T, url, prefix string) {
	st, err := redis.Open(context.Background(), redis.Options{URL: url, Prefix: prefix, AllowVolatile: true, InitIfEmpty: true})
	if err != nil {
		t.Errorf("cleaning up %s: %v", prefix, err)
		return
	}
	defer st.Close()
	ctx := context.Background()
	iter := st.Client().Scan(ctx, 0, prefix+"*", 1000).Iterator()
	var keys []string
	for iter.Next(ctx) {
		keys = append(keys, iter.Val())
	}
	if len(keys) > 0 {
		st.Client().Del(ctx, keys...)
	}
}

// The admin API's read-only Index lookup: the derived payee history of an observed endpoint, 404 for an
// unknown one, 400 for a URL that is not one, and the bearer token like every /v1 route.
func TestAdminEndpointsLookup(t *testing.T) {
	type endpointsView struct { // proxy/admin/endpoints.go
		URL          string                   `json:"url"`
		Summary      index.Summary            `json:"summary"`
		ByMethod     map[string]index.Summary `json:"by_method"`
		Observations []store.Observation      `json:"observations"`
	}
	st := memory.New()
	h := newHarness(t, st, testRules(), withIndex(t, st))
	s := newMutableSeller(t, sellerPayTo, "10000")
	u := s.srv.URL + "/weather?city=x"
	h.buyer().get(u, nil)
	waitObservations(t, st, u, 1)
	code, body := h.api("GET", "/v1/endpoints?url="+neturl.QueryEscape(u), testToken, nil)
	var v endpointsView
	if code != 200 || json.Unmarshal(body, &v) != nil {
		t.Fatalf("lookup: %d %s", code, body)
	}
	if v.URL != s.srv.URL+"/weather" || v.Summary.Observations != 1 || len(v.Summary.PayTo) != 1 ||
		v.Summary.PayTo[0].Current[0] != strings.ToLower(sellerPayTo) || v.Summary.Category != "weather" || v.ByMethod["GET"].Observations != 1 {
		t.Fatalf("lookup body: %s", body)
	}
	// Another spelling of the endpoint is the same key (index.NormalizeURL): the same view.
	port := s.srv.URL[strings.LastIndex(s.srv.URL, ":")+1:]
	for _, other := range []string{s.srv.URL + "/Weather/", s.srv.URL + "/%77eather;x", "http://[::ffff:127.0.0.1]:" + port + "/weather"} {
		var w endpointsView
		if code, body := h.api("GET", "/v1/endpoints?url="+neturl.QueryEscape(other), testToken, nil); code != 200 ||
			json.Unmarshal(body, &w) != nil || w.URL != v.URL || w.Summary.Observations != 1 {
			t.Errorf("lookup by %s: %d %s", other, code, body)
		}
	}
	if code, body := h.api("GET", "/v1/endpoints?url="+neturl.QueryEscape("https://never.example/x"), testToken, nil); code != 404 ||
		!strings.Contains(string(body), "endpoint_not_listed") {
		t.Fatalf("unknown endpoint: %d %s", code, body)
	}
	if code, _ := h.api("GET", "/v1/endpoints?url=ftp://x/", testToken, nil); code != 400 {
		t.Fatalf("bad url: %d", code)
	}
	if code, _ := h.api("GET", "/v1/endpoints?url="+neturl.QueryEscape(u), "", nil); code != 401 {
		t.Fatalf("no token: %d", code)
	}
}

// An Index reason's detail may quote a probe error ("network is unreachable") or a price ("exceeds"): the class
// comes from the reason's code, never from words in its text.
func TestReasonClassComesFromTheCode(t *testing.T) {
	for _, c := range []struct{ reason, code, want string }{
		{"hold: endpoint_failed_last_3: the last 3 unpaid probes failed (latest: dial tcp: network is unreachable)", policy.CodeEndpointFailedLast3, "index"},
		{"hold: endpoint_payto_changed: payTo 0xb differs from 0xa offered for eip155:8453/0x83 at 2026-11-25T10:00:00Z", policy.CodeEndpointPayToChanged, "index"},
		{"hold: endpoint_price_above_category_median: $0.1 is more than 5x the median $0.01 (own_history, 3 samples)", policy.CodeEndpointPriceAboveCategoryMedian, "index"},
		{"hold: invalid_index_rule: max_price_multiple -1 must be a positive number or null", policy.CodeInvalidIndexRule, "index"},
		// Text that would have matched another class's words: the code decides.
		{"hold: sanctions data unavailable", policy.CodeSanctionsUnavailable, "screening_unavailable"},
		{"hold: internal error: network exceeds max OFAC", policy.CodeInternalError, "internal_error"},
	} {
		res := &preflight.Result{Decision: "hold", Reasons: []string{c.reason}, ReasonCodes: []string{c.code}}
		if got := reasonClass(res); got != c.want {
			t.Errorf("reasonClass(%q, %s) = %q, want %q", c.reason, c.code, got, c.want)
		}
	}
}

// Every reason code has a metric class of its own mapping (no "other" for a reason the engine can give).
func TestEveryReasonCodeHasAClass(t *testing.T) {
	for _, c := range policy.ReasonCodes {
		if classOfCode[c] == "" {
			t.Errorf("reason code %q has no reason_class", c)
		}
	}
}

// max_price_multiple against the category: three other sites in "weather" at $0.01 (paid and settled
// earlier, here fed to the same Writer the proxy uses), a new endpoint in "weather" asking $0.10 → held, naming both prices
// and the basis. A seller with ten endpoints on one site at $1 does not move the median.
func TestCategoryMedianHoldsANewEndpoint(t *testing.T) {
	st := memory.New()
	testCategoryMedian(t, st, st)
}

// The same across a fleet on one Redis: the category sample written by replica A's writer is what replica
// B decides with.
func TestFleetSharesTheCategorySample(t *testing.T) {
	u := testredis.URL(t)
	prefix := "payguard-test-category:" + store.NewID()[:12] + ":"
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
	testCategoryMedian(t, stA, stB)
}

// categoryStore is a store with the category sample.
type categoryStore interface {
	State
	store.Endpoints
	store.CategoryPrices
}

// testCategoryMedian: the other sites are observed through a writer on stA; the proxy deciding reads stB.
func testCategoryMedian(t *testing.T, stA, stB categoryStore) {
	w := index.NewWriter(stA, index.WriterOptions{Keep: store.Retention{MaxPerURL: 100, MaxAge: 30 * 24 * time.Hour}})
	t.Cleanup(w.Close)
	h := newHarness(t, stB, testRules(), withIndex(t, stB))
	seen := func(url, amount string) {
		pr := &x402.PaymentRequired{X402Version: x402.V2, Accepts: []x402.Requirement{offer(x402.V2, "eip155:8453", baseUSDC, sellerPayTo, amount)},
			Extensions: map[string]json.RawMessage{"bazaar": json.RawMessage(`{"info":{"category":"weather"}}`)}}
		c := index.FromChallenge(url, "GET", pr, time.Now())
		w.Observe(c)
		// Only evidence that cost something enters the sample: a payment to each, settled.
		w.Observe(index.FromPaid(url, "GET", c.Offers[0], http.StatusOK, true, c.ObservedAt.Add(time.Millisecond)))
	}
	for _, host := range []string{"a.example", "b.example", "c.example"} {
		seen("https://"+host+"/weather", "10000")
	}
	// One seller, ten endpoints on subdomains of one domain, at $1: one vote.
	for i := 0; i < 10; i++ {
		seen(fmt.Sprintf("https://api%d.pricey.example/w%d", i, i), "1000000")
	}
	testutil.Eventually(t, 10*time.Second, func() bool {
		sample, _ := stB.CategoryPrices(context.Background(), "weather")
		return len(sample) >= 3+store.MaxCategoryURLsPerHost
	}, "the category sample written")
	s := newMutableSeller(t, sellerPayTo, "100000") // declares "weather"
	resp, body := h.buyer().get(s.srv.URL+"/weather", nil)
	r := decodeRefusal(t, resp, body)
	if r.Decision != hold || !hasReason(r.Reasons,
		"hold: endpoint_price_above_category_median: $0.1 is more than 5x the median $0.01 (category weather, 4 other hosts)") {
		t.Fatalf("new endpoint at 10x the category: %s %q", r.Decision, r.Reasons)
	}
	// At $0.05 (5x, not more) it passes the rule.
	s2 := newMutableSeller(t, sellerPayTo, "50000")
	if resp, body := h.buyer().get(s2.srv.URL+"/weather", nil); resp.StatusCode != http.StatusPaymentRequired {
		t.Fatalf("at 5x the category median: %d %s", resp.StatusCode, body)
	}
}
