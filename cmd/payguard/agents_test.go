package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/payguard/payguard/config"
	"github.com/payguard/payguard/internal/apitoken"
	"github.com/payguard/payguard/internal/app"
	"github.com/payguard/payguard/internal/testutil"
	"github.com/payguard/payguard/x402"
)

const agentsYAML = `proxy:
  listen: 127.0.0.1:0
  hold_wait: 0s
admin:
  listen: 127.0.0.1:0
agents:
  unauthenticated: refuse
  list:
    - id: research
      secret_sha256: %s
      daily_cap_usd: 5
%s
journal:
  path: decisions.jsonl
  max_bytes: 65536
  max_files: 2
`

func writeAgentsConfig(t *testing.T, path, extra string) {
	t.Helper()
	sum := sha256.Sum256([]byte("s3cret"))
	body := strings.Replace(strings.Replace(agentsYAML, "%s", hex.EncodeToString(sum[:]), 1), "%s", extra, 1)
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}

// payguard proxy with agents from its file: an agent without credentials gets 407, one with them is
// decided and journaled; a reload with a looser agent rule is refused and the old rules stay; a good one
// (POST /v1/reload, then SIGHUP) changes the config hash; verify-receipt --journal verifies the journal.
func TestProxyAgentsReloadJournal(t *testing.T) {
	t.Setenv(apitoken.AdminEnv, "test-admin-token-0123456789")
	dir := t.TempDir()
	t.Chdir(dir)
	cfgPath := filepath.Join(dir, "payguard.yaml")
	writeAgentsConfig(t, cfgPath, "")
	cfg, err := config.Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	out := bannerWriter{ch: make(chan string, 1)}
	done := make(chan error, 1)
	go func() {
		ln := app.ProxyListeners{Proxy: testutil.Listen(t), Admin: testutil.Listen(t)}
		done <- app.RunProxy(ctx, cfg, ln, app.ProxyRun{Flags: app.Flags{Offline: true}, ConfigPath: cfgPath, Log: slog.New(slog.DiscardHandler), Banner: out})
	}()
	var banner string
	select {
	case banner = <-out.ch:
	case err := <-done:
		cancel()
		t.Fatalf("proxy: %v", err)
	}
	t.Cleanup(func() { cancel(); <-done })
	adminURL := bannerField(t, banner, "admin API")

	seller := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		pr := x402.PaymentRequired{X402Version: x402.V2, Resource: &x402.ResourceInfo{URL: "http://" + r.Host + r.URL.Path},
			Accepts: []x402.Requirement{{Version: x402.V2, Scheme: "exact", Network: "eip155:8453", Amount: "10000",
				Asset: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913", PayTo: "0xf54127927F219FB78C8D1A1fF3D7dc6D7f70C98E",
				MaxTimeoutSeconds: 60, Extra: json.RawMessage(`{"name":"USD Coin","version":"2"}`)}}}
		h, _ := x402.EncodeHeaderJSON(pr)
		w.Header().Set(x402.HeaderPaymentRequired, h)
		w.WriteHeader(http.StatusPaymentRequired)
	}))
	defer seller.Close()
	pu, _ := url.Parse(bannerField(t, banner, "proxy"))
	get := func(user *url.Userinfo) *http.Response {
		u := *pu
		u.User = user
		tr := &http.Transport{Proxy: http.ProxyURL(&u)}
		defer tr.CloseIdleConnections()
		resp, err := (&http.Client{Transport: tr}).Get(seller.URL + "/report")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	if resp := get(nil); resp.StatusCode != http.StatusProxyAuthRequired {
		t.Fatalf("no credentials: %d, want 407", resp.StatusCode)
	}
	// Offline, no sanctions list: the payment is held (and refused at once, hold_wait 0), decided as research.
	if resp := get(url.UserPassword("research", "s3cret")); resp.StatusCode != http.StatusForbidden || resp.Header.Get("X-Payguard-Hold") == "" {
		t.Fatalf("research: %d %v", resp.StatusCode, resp.Header)
	}
	api := func(method, path string) (int, string) {
		req, _ := http.NewRequest(method, adminURL+path, nil)
		req.Header.Set("Authorization", "Bearer test-admin-token-0123456789")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := api(http.MethodGet, "/v1/decisions?agent=research"); code != 200 || !strings.Contains(body, `"agent":"research"`) {
		t.Fatalf("decisions: %d %s", code, body)
	}
	hash := func() string {
		_, m := api(http.MethodGet, "/metrics")
		_, rest, _ := strings.Cut(m, `payguard_config_info{config_sha256="`)
		h, _, _ := strings.Cut(rest, `"`)
		return h
	}
	first := hash()
	if len(first) != 64 {
		t.Fatalf("config hash in metrics: %q", first)
	}
	// A looser agent rule: refused, the old rules stay.
	writeAgentsConfig(t, cfgPath, "      rules: {max_per_payment_usd: 100}")
	if code, body := api(http.MethodPost, "/v1/reload"); code != http.StatusUnprocessableEntity || !strings.Contains(body, "max_per_payment_usd") {
		t.Errorf("loose reload: %d %s", code, body)
	}
	if hash() != first {
		t.Error("a refused reload changed the rules")
	}
	writeAgentsConfig(t, cfgPath, "      rules: {max_per_payment_usd: 0.5}")
	code, body := api(http.MethodPost, "/v1/reload")
	second := hash()
	if code != 200 || second == first || !strings.Contains(body, second) {
		t.Fatalf("good reload: %d %s (hash %s → %s)", code, body, first, second)
	}
	// SIGHUP reloads too.
	writeAgentsConfig(t, cfgPath, "      rules: {max_per_payment_usd: 0.25}")
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second) // a bound on a signal's delivery, not a timed assertion
	for hash() == second && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if hash() == second {
		t.Error("SIGHUP did not reload")
	}

	cancel()
	<-done
	var stdout, stderr bytes.Buffer
	if code := runMain([]string{"verify-receipt", "--keys", cfg.Keys.ReceiptKeyFile, "--journal", "decisions.jsonl"}, nil, &stdout, &stderr); code != 0 || !strings.Contains(stdout.String(), "valid: 1 decisions") {
		t.Errorf("verify-receipt --journal: %d %s %s", code, stdout.String(), stderr.String())
	}
	done <- nil // for the cleanup's receive
}
