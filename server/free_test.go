package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/payguard/payguard/server/core"
	"github.com/payguard/payguard/server/fees"
	"github.com/payguard/payguard/server/internal/metrictest"
)

func TestFreeDocuments(t *testing.T) {
	e := newEnv(t)
	jsonDocs := []string{"/v1/sample", "/v1/rules/default", "/health", "/status", "/.well-known/x402",
		"/.well-known/agent-card.json", "/.well-known/mcp.json"}
	for _, p := range jsonDocs {
		r := e.do("GET", p, nil, nil)
		if r.StatusCode != 200 || r.json(t)["data_as_of"] != "2026-11-21T00:00:00Z" || r.Header.Get("X-Data-As-Of") == "" {
			t.Errorf("%s: %d %.200s", p, r.StatusCode, r.body)
		}
	}
	for _, p := range []string{"/llms.txt", "/terms", "/privacy", "/.well-known/security.txt", "/openapi.json", "/.well-known/payguard-keys.json"} {
		r := e.do("GET", p, nil, nil)
		if r.StatusCode != 200 || r.Header.Get("X-Data-As-Of") != "2026-11-21T00:00:00Z" || len(r.body) < 50 {
			t.Errorf("%s: %d %q", p, r.StatusCode, r.Header.Get("X-Data-As-Of"))
		}
		if strings.Contains(string(r.body), "<PAYTO") || strings.Contains(string(r.body), "<USDC") {
			t.Errorf("%s has a placeholder", p)
		}
	}
	if e.fac.Verifies.Load() != 0 {
		t.Fatal("a free document asked the facilitator")
	}
}

func TestDiscoveryContent(t *testing.T) {
	e := newEnv(t)
	x := e.do("GET", "/.well-known/x402", nil, nil).json(t)
	res := x["resources"].([]any)
	prices := map[string]string{}
	for _, r := range res {
		m := r.(map[string]any)
		prices[m["resource"].(string)] = m["amount"].(string)
		if m["network"] != "eip155:84532" || m["asset"] != testAsset || m["payTo"] != testPayTo {
			t.Errorf("terms %v", m)
		}
	}
	if prices[e.http.URL+"/v1/check"] != "10000" || prices[e.http.URL+"/v1/preflight"] != "20000" || prices[e.http.URL+"/v1/endpoint"] != "5000" {
		t.Fatalf("prices %v", prices)
	}
	card := e.do("GET", "/.well-known/agent-card.json", nil, nil).json(t)
	caps := card["capabilities"].(map[string]any)
	if caps["streaming"] != false || caps["pushNotifications"] != false || len(card["skills"].([]any)) != 3 || card["url"] != e.http.URL {
		t.Fatalf("agent card %v", card)
	}
	mcp := e.do("GET", "/.well-known/mcp.json", nil, nil).json(t)
	if mcp["endpoint"] != e.http.URL+"/mcp" || mcp["transport"] != "streamable-http" || len(mcp["tools"].([]any)) != 4 {
		t.Fatalf("mcp %v", mcp)
	}
	sec := string(e.do("GET", "/.well-known/security.txt", nil, nil).body)
	for _, f := range []string{"Contact: mailto:", "Expires: 2027-05-21T12:00:00Z", "Canonical: " + e.http.URL + "/.well-known/security.txt"} {
		if !strings.Contains(sec, f) {
			t.Errorf("security.txt lacks %q:\n%s", f, sec)
		}
	}
	keys := e.do("GET", "/.well-known/payguard-keys.json", nil, nil).json(t)
	if k := keys["keys"].([]any); len(k) != 1 || k[0].(map[string]any)["kid"] != "test-kid" || k[0].(map[string]any)["d"] != nil {
		t.Fatalf("jwks %v", keys)
	}
	llms := string(e.do("GET", "/llms.txt", nil, nil).body)
	if !strings.Contains(llms, "$0.005") || !strings.Contains(llms, testPayTo) {
		t.Fatalf("llms.txt:\n%s", llms)
	}
	rules := e.do("GET", "/v1/rules/default", nil, nil).json(t)["rules"].(map[string]any)
	if rules["max_per_payment_usd"].(float64) != 1 || rules["hold_above_usd"].(float64) != 0.25 {
		t.Fatalf("rules %v", rules)
	}
}

func TestHealthWithoutSanctionsIs503(t *testing.T) {
	e := newEnv(t)
	e.sanctions.ready.Store(false)
	r := e.do("GET", "/health", nil, nil)
	if r.StatusCode != 503 || r.json(t)["status"] != "unavailable" {
		t.Fatalf("%d %s", r.StatusCode, r.body)
	}
	if r := e.do("GET", "/v1/sample", nil, nil); r.StatusCode != 503 || r.errCode(t) != core.CodeSanctionsUnavailable {
		t.Fatalf("sample: %d", r.StatusCode)
	}
}

func TestLogLineHasNoBodyOrQuery(t *testing.T) {
	e := newEnv(t)
	e.do("GET", "/v1/check?name=Secret%20Merchant&trial=1", nil, nil)
	e.do("POST", "/v1/preflight?trial=1", []byte(`{"cart":{"merchant_name":"Hidden Payee Ltd","total_usd":1}}`), nil)
	logs := e.logs.String()
	if strings.Contains(logs, "Secret") || strings.Contains(logs, "Hidden Payee") || strings.Contains(logs, "127.0.0.1") {
		t.Fatalf("the log holds request data:\n%s", logs)
	}
	if n := strings.Count(logs, `"path":"/v1/`); n != 2 || !strings.Contains(logs, `"decision":"hold"`) || !strings.Contains(logs, `"receipt_id":"r-1"`) {
		t.Fatalf("want one line per request with the decision:\n%s", logs)
	}
}

func TestMountServesExtraHandlers(t *testing.T) {
	e := newEnv(t)
	e.srv.Mount("/mcp", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"jsonrpc":"2.0"}`))
	}))
	resp, err := http.Post(e.http.URL+"/mcp", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("%d", resp.StatusCode)
	}
	if o := e.srv.offer(core.RoutePreflight); o.Amount != core.PricePreflight || !o.OfferReceipt {
		t.Fatalf("offer %+v", o)
	}
}

func TestPanicIs500InTheErrorShape(t *testing.T) {
	e := newEnv(t)
	e.srv.Mount("/boom", http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("boom") }))
	resp, err := http.Get(e.http.URL + "/boom")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct{ Error struct{ Code string } } // SPEC §9.1
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || resp.StatusCode != 500 || body.Error.Code != core.CodeInternal {
		t.Fatalf("%d %+v %v", resp.StatusCode, body, err)
	}
	if !strings.Contains(e.logs.String(), "handler panic") {
		t.Fatal("the panic was not logged")
	}
}

func TestMetrics(t *testing.T) {
	e := newEnv(t)
	ch := challengeV2(t, e.do("GET", "/v1/check?name=a", nil, nil))
	e.do("GET", "/v1/check?name=a", nil, payV2(t, ch, "0x31"))
	e.do("GET", "/v1/check?name=a&trial=1", nil, nil)
	e.fac.VerifyMode.Store("5xx")
	e.do("GET", "/v1/check?name=a", nil, payV2(t, ch, "0x32"))
	got := metrictest.Counters(t, e.registry)
	for key, want := range map[string]float64{
		"payguard_server_payments_total|settled|/v1/check":                 1,
		"payguard_server_payments_total|challenged|/v1/check":              1,
		"payguard_server_payments_total|facilitator_unavailable|/v1/check": 1,
		"payguard_server_trial_calls_total|granted":                        1,
		"payguard_server_requests_total|200|/v1/check":                     2,
	} {
		if got[key] != want {
			t.Errorf("%s = %v, want %v (all: %v)", key, got[key], want, got)
		}
	}
}

func TestFacilitatorCheckShowsInHealthAndStatus(t *testing.T) {
	e := newEnv(t)
	f := fees.NewFacilitator(e.fac.Srv.URL, nil, time.Second, time.Second)
	if err := e.srv.CheckFacilitator(t.Context(), f); err != nil {
		t.Fatalf("supported: %v", err)
	}
	for _, p := range []string{"/health", "/status"} {
		fac, _ := e.do("GET", p, nil, nil).json(t)["facilitator"].(map[string]any)
		if fac["ok"] != true {
			t.Fatalf("%s facilitator %v", p, fac)
		}
	}
	e.fac.Srv.Close()
	if err := e.srv.CheckFacilitator(t.Context(), f); err == nil {
		t.Fatal("a closed facilitator checked ok")
	}
	fac, _ := e.do("GET", "/health", nil, nil).json(t)["facilitator"].(map[string]any)
	if fac["ok"] != false || fac["error"] == "" {
		t.Fatalf("health facilitator %v", fac)
	}
}

// /health and /readyz, serve's readiness, follow the store: while the store cannot record a paid call (a
// full disk under the bolt journal, a wiped Redis ledger) both are 503 and say why, and /healthz (liveness)
// stays 200. The old /health stayed 200, and /readyz asked only for the sanctions list.
func TestHealthFollowsTheStore(t *testing.T) {
	e := newEnv(t)
	failing := &e.storeErr
	for _, path := range []string{"/health", "/readyz"} {
		if r := e.do("GET", path, nil, nil); r.StatusCode != 200 {
			t.Fatalf("healthy %s: %d %s", path, r.StatusCode, r.body)
		}
	}
	err := errors.New("store/bolt: writing the journal: no space left on device")
	failing.Store(&err)
	r := e.do("GET", "/health", nil, nil)
	st, _ := r.json(t)["store"].(map[string]any)
	if r.StatusCode != 503 || st["ready"] != false || !strings.Contains(fmt.Sprint(st["error"]), "no space left") {
		t.Fatalf("/health, store failing: %d %s", r.StatusCode, r.body)
	}
	r = e.do("GET", "/readyz", nil, nil)
	if b := r.json(t); r.StatusCode != 503 || b["status"] != "not ready" || !strings.Contains(fmt.Sprint(b["error"]), "no space left") {
		t.Fatalf("/readyz, store failing: %d %s", r.StatusCode, r.body)
	}
	if r := e.do("GET", "/healthz", nil, nil); r.StatusCode != 200 {
		t.Fatalf("/healthz, store failing: %d (liveness does not depend on the store)", r.StatusCode)
	}
	failing.Store(nil)
	for _, path := range []string{"/health", "/readyz"} {
		if r := e.do("GET", path, nil, nil); r.StatusCode != 200 {
			t.Fatalf("recovered %s: %d %s", path, r.StatusCode, r.body)
		}
	}
}
