package main

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/payguard/payguard/config"
	"github.com/payguard/payguard/internal/apitoken"
	"github.com/payguard/payguard/internal/app"
	"github.com/payguard/payguard/x402"
)

// holdingProxy runs `payguard proxy` (default configuration, --offline: no sanctions list, so every
// payment is held; hold_wait 0) in a temporary directory, and makes one hold with a real 402 through it.
func holdingProxy(t *testing.T) (adminURL, holdID string) {
	t.Helper()
	t.Setenv(apitoken.AdminEnv, "")
	t.Chdir(t.TempDir())
	cfg, err := config.Default()
	if err != nil {
		t.Fatal(err)
	}
	cfg.Proxy.Listen, cfg.Admin.Listen, cfg.Proxy.HoldWait = "127.0.0.1:0", "127.0.0.1:0", 0
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
		t.Fatalf("proxy: %v", err)
	}
	t.Cleanup(func() { cancel(); <-done })

	seller := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		pr := x402.PaymentRequired{X402Version: x402.V2, Resource: &x402.ResourceInfo{URL: "http://" + r.Host + r.URL.Path,
			Description: "Hourly weather for Lisbon"},
			Accepts: []x402.Requirement{{Version: x402.V2, Scheme: "exact", Network: "eip155:8453", Amount: "10000",
				Asset: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913", PayTo: "0xf54127927F219FB78C8D1A1fF3D7dc6D7f70C98E",
				MaxTimeoutSeconds: 60, Extra: json.RawMessage(`{"name":"USD Coin","version":"2"}`)}}}
		h, _ := x402.EncodeHeaderJSON(pr)
		w.Header().Set(x402.HeaderPaymentRequired, h)
		w.WriteHeader(http.StatusPaymentRequired)
	}))
	t.Cleanup(seller.Close)
	pu, _ := url.Parse(bannerField(t, banner, "proxy"))
	client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(pu)}}
	resp, err := client.Get(seller.URL + "/report")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	id := resp.Header.Get("X-Payguard-Hold")
	if resp.StatusCode != http.StatusForbidden || id == "" {
		t.Fatalf("want a hold: %d %v", resp.StatusCode, resp.Header)
	}
	return bannerField(t, banner, "admin API"), id
}

func holdsCmd(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := runMain(append([]string{"holds"}, args...), nil, &out, &errb)
	return code, out.String(), errb.String()
}

// The CLI finds the token in the data dir, lists and shows the hold (table and JSON), approves it with a
// name and a note, and reports a second decision's conflict and a wrong token as failures.
func TestHoldsCLI(t *testing.T) {
	admin, id := holdingProxy(t)

	code, out, errs := holdsCmd("list", "--admin", admin)
	if code != 0 || !strings.Contains(out, id) || !strings.Contains(out, "pending") || !strings.Contains(out, "$0.01") ||
		!strings.Contains(out, "sanctions data unavailable") || !strings.HasPrefix(out, "ID ") {
		t.Fatalf("list: %d\n%s\n%s", code, out, errs)
	}
	code, out, _ = holdsCmd("list", "--admin", admin, "--json", "--status", "pending")
	var listed struct{ Holds []struct{ ID, Status string } }
	if code != 0 || json.Unmarshal([]byte(out), &listed) != nil || len(listed.Holds) != 1 || listed.Holds[0].ID != id {
		t.Fatalf("list --json: %d %s", code, out)
	}
	code, out, _ = holdsCmd("show", id, "--admin", admin)
	for _, want := range []string{"status", "pending", "0xf54127927F219FB78C8D1A1fF3D7dc6D7f70C98E", "Base (eip155:8453)",
		"USDC (0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913)", "Hourly weather for Lisbon", "10000 atomic", "reason"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Fatalf("show lacks %q: %d\n%s", want, code, out)
		}
	}
	t.Logf("payguard holds show:\n%s", out)
	code, out, errs = holdsCmd("approve", id, "--admin", admin, "--by", "alice", "--note", "known vendor", "--json")
	var h struct{ Status, ResolvedBy, Note string }
	_ = json.Unmarshal([]byte(out), &struct {
		Status     *string `json:"status"`
		ResolvedBy *string `json:"resolved_by"`
		Note       *string `json:"note"`
	}{&h.Status, &h.ResolvedBy, &h.Note})
	if code != 0 || h.Status != "approved" || h.ResolvedBy != "alice" || h.Note != "known vendor" {
		t.Fatalf("approve: %d %s %s", code, out, errs)
	}
	if code, _, errs = holdsCmd("deny", id, "--admin", admin, "--by", "bob"); code != 1 || !strings.Contains(errs, "409") {
		t.Errorf("deny after approve: %d %s", code, errs)
	}
	// --status all (the documented spelling of "every hold") and a status filter; a flood of wrong console
	// sign-ins from this address meanwhile does not stop the CLI (it uses the bearer API).
	for range 50 {
		req, _ := http.NewRequest("POST", admin+"/console/session", strings.NewReader(`{"token":"wrong-token-wrong-token"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Origin", admin)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}
	for status, want := range map[string]int{"all": 1, "approved": 1, "pending": 0} {
		code, out, errs = holdsCmd("list", "--admin", admin, "--json", "--status", status)
		listed.Holds = nil
		if code != 0 || json.Unmarshal([]byte(out), &listed) != nil || len(listed.Holds) != want {
			t.Errorf("list --status %s: %d %s %s, want %d holds", status, code, out, errs, want)
		}
	}
	if code, out, errs = holdsCmd("list", "--admin", admin, "--status", "all"); code != 0 || !strings.Contains(out, id) || !strings.Contains(out, "approved") {
		t.Errorf("list --status all (table): %d %s %s", code, out, errs)
	}
	t.Setenv(apitoken.AdminEnv, "wrong-token-wrong-token")
	if code, _, errs = holdsCmd("list", "--admin", admin); code != 1 || !strings.Contains(errs, "401") {
		t.Errorf("wrong token from the environment: %d %s", code, errs)
	}
	// The flags win over the environment: --token, then --token-file (the data dir's own file works as one).
	good, err := os.ReadFile(filepath.Join("payguard-data", "admin-token"))
	if err != nil {
		t.Fatal(err)
	}
	if code, out, errs = holdsCmd("list", "--admin", admin, "--token", strings.TrimSpace(string(good))); code != 0 || !strings.Contains(out, id) {
		t.Errorf("--token over a wrong $PAYGUARD_ADMIN_TOKEN: %d %s %s", code, out, errs)
	}
	if code, out, errs = holdsCmd("list", "--admin", admin, "--token-file", filepath.Join("payguard-data", "admin-token")); code != 0 || !strings.Contains(out, id) {
		t.Errorf("--token-file over a wrong $PAYGUARD_ADMIN_TOKEN: %d %s %s", code, out, errs)
	}
	bad := filepath.Join(t.TempDir(), "bad-token")
	if err := os.WriteFile(bad, []byte("another-wrong-token-123\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, errs = holdsCmd("list", "--admin", admin, "--token-file", bad, "--token", strings.TrimSpace(string(good))); code != 1 || !strings.Contains(errs, "401") {
		t.Errorf("--token-file (wrong) is used before --token: %d %s", code, errs)
	}
	if code, _, _ = holdsCmd("approve", "--admin", admin); code != 2 {
		t.Errorf("approve without an id: %d, want 2", code)
	}
	if code, _, _ = holdsCmd("frobnicate"); code != 2 {
		t.Errorf("unknown subcommand: %d, want 2", code)
	}
}
