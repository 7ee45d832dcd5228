package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/payguard/payguard/config"
	"github.com/payguard/payguard/internal/apitoken"
	"github.com/payguard/payguard/internal/app"
	"github.com/payguard/payguard/internal/testutil"
	"github.com/payguard/payguard/server/fees"
	"github.com/payguard/payguard/store"
	"github.com/payguard/payguard/x402"
)

// `payguard proxy` with index.probe enabled probes its configured endpoints: a local seller (reachable only
// because the test lifts the egress guard for loopback with allow_private) receives unpaid requests, the
// admin API lists an observation with source "probe", and payguard_index_probes_total{result="usable"} moves.
func TestProxyProbesConfiguredEndpoints(t *testing.T) {
	const token = "probe-test-admin-token-0123456789"
	t.Setenv(apitoken.AdminEnv, token)
	t.Chdir(t.TempDir())
	seller, hits := probedSeller(t)
	target := seller.URL + "/weather"

	cfg, err := config.Default()
	if err != nil {
		t.Fatal(err)
	}
	cfg.Index.Probe.Enabled = true
	cfg.Index.Probe.Endpoints = []string{target}
	cfg.Index.Probe.AllowPrivate = []string{"127.0.0.0/8"}
	cfg.Index.Probe.Interval = config.Duration(200 * time.Millisecond)
	cfg.Index.Probe.PerHostInterval = 0
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	out := bannerWriter{ch: make(chan string, 1)}
	done := make(chan error, 1)
	ln := proxyListeners(t)
	go func() {
		done <- serveProxy(ln, ctx, cfg, app.Flags{Offline: true}, slog.New(slog.DiscardHandler), out)
	}()
	var banner string
	select {
	case banner = <-out.ch:
	case err := <-done:
		cancel()
		t.Fatalf("payguard proxy exited before listening: %v", err)
	}
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serveProxy: %v", err)
		}
	}()
	admin := bannerField(t, banner, "admin API")
	get := func(path string) (int, []byte) {
		req, _ := http.NewRequest("GET", admin+path, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}

	var view struct {
		Observations []store.Observation `json:"observations"`
	}
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		code, body := get("/v1/endpoints?url=" + url.QueryEscape(target))
		if code == http.StatusOK {
			if err := json.Unmarshal(body, &view); err != nil {
				t.Fatalf("endpoints view: %v: %s", err, body)
			}
			if n := len(view.Observations); n > 0 && view.Observations[n-1].Source == store.SourceProbe {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no probe observation of %s (seller saw %d requests); last answer %d %s", target, hits.Load(), code, body)
		}
	}
	if o := view.Observations[len(view.Observations)-1]; !o.Usable || o.Status != http.StatusPaymentRequired || len(o.Offers) != 1 {
		t.Fatalf("probe observation: %+v", o)
	}
	if hits.Load() == 0 {
		t.Fatal("the seller saw no request")
	}
	code, metrics := get("/metrics")
	if code != http.StatusOK || !strings.Contains(string(metrics), `payguard_index_probes_total{result="usable"}`) ||
		strings.Contains(string(metrics), `payguard_index_probes_total{result="usable"} 0`) {
		t.Fatalf("metrics %d: no usable probe counted", code)
	}
}

// probedSeller is a local x402 seller answering every request with a 402 and counting them; a request
// carrying a payment fails the test (probes are unpaid).
func probedSeller(t *testing.T) (*httptest.Server, *atomic.Int64) {
	hits := new(atomic.Int64)
	seller := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if r.Header.Get("PAYMENT-SIGNATURE") != "" || r.Header.Get("X-PAYMENT") != "" {
			t.Errorf("a probe carried a payment header")
		}
		pr := &x402.PaymentRequired{X402Version: x402.V2, Error: "payment required",
			Resource: &x402.ResourceInfo{URL: "http://" + r.Host + r.URL.Path},
			Accepts: []x402.Requirement{{Scheme: "exact", Network: "eip155:8453", Amount: "10000",
				Asset: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913", PayTo: "0x1111111111111111111111111111111111111111",
				MaxTimeoutSeconds: 60}}}
		h, err := x402.EncodeHeaderJSON(pr)
		if err != nil {
			t.Error(err)
		}
		w.Header().Set(x402.HeaderPaymentRequired, h)
		w.WriteHeader(http.StatusPaymentRequired)
		w.Write([]byte("{}"))
	}))
	t.Cleanup(seller.Close)
	return seller, hits
}

// `payguard serve` with index.probe enabled probes too: the seller is asked, and the server's
// payguard_index_probes_total{result="usable"} moves.
func TestServeProbesConfiguredEndpoints(t *testing.T) {
	dir := t.TempDir()
	seller, hits := probedSeller(t)
	ln := app.ServeListeners{API: testutil.Listen(t), Metrics: testutil.Listen(t)}
	addr, metricsAddr := ln.API.Addr().String(), ln.Metrics.Addr().String()
	cfg, err := config.Parse([]byte(`
server:
  listen: ` + addr + `
  base_url: http://` + addr + `
  metrics_listen: ` + metricsAddr + `
  fees:
    network: eip155:84532
    pay_to: "0xf54127927F219FB78C8D1A1fF3D7dc6D7f70C98E"
    facilitator_url: http://127.0.0.1:1
store:
  driver: bolt
  path: ` + filepath.Join(dir, "payguard.db") + `
proxy:
  data_dir: ` + dir + `
keys:
  receipt_key_file: ` + filepath.Join(dir, "keys.json") + `
index:
  probe:
    enabled: true
    endpoints: [` + seller.URL + `/weather]
    allow_private: [127.0.0.0/8]
    interval: 200ms
    per_host_interval: 0s
`))
	if err != nil {
		t.Fatal(err)
	}
	terms, err := fees.TermsFromConfig(cfg.Server.Fees)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		run := app.ServeRun{Flags: app.Flags{Offline: true, SanctionsDir: "testdata/check-sanctions"}, Terms: terms, Log: slog.New(slog.DiscardHandler)}
		done <- app.RunServe(ctx, cfg, ln, run)
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serveAPI: %v", err)
		}
	}()
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		var b []byte
		if resp, err := http.Get("http://" + metricsAddr + "/metrics"); err == nil {
			b, _ = io.ReadAll(resp.Body)
			resp.Body.Close()
		}
		if m := string(b); strings.Contains(m, `payguard_index_probes_total{result="usable"}`) &&
			!strings.Contains(m, `payguard_index_probes_total{result="usable"} 0`) && hits.Load() > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no usable probe counted by serve (seller saw %d requests)", hits.Load())
		}
	}
}
