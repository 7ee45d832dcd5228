package main

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/payguard/payguard/config"
	"github.com/payguard/payguard/internal/apitoken"
	"github.com/payguard/payguard/internal/app"
)

func TestConfigValidate(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(good, []byte("proxy:\n  listen: 127.0.0.1:9402\nrules:\n  daily_cap_usd: 5\n"), 0o600)
	os.WriteFile(bad, []byte("proxy:\n  listen: 127.0.0.1:9402\n  hold_wiat: 5s\n"), 0o600)
	var out, errb bytes.Buffer
	if code := runMain([]string{"config", "validate", good}, nil, &out, &errb); code != 0 || strings.TrimSpace(out.String()) != "ok" {
		t.Errorf("valid file: exit %d, stdout %q, stderr %q", code, out.String(), errb.String())
	}
	out.Reset()
	errb.Reset()
	if code := runMain([]string{"config", "validate", bad}, nil, &out, &errb); code != 2 || !strings.Contains(errb.String(), "hold_wiat") {
		t.Errorf("unknown key: exit %d, stderr %q", code, errb.String())
	}
	if code := runMain([]string{"config", "validate"}, nil, &out, &errb); code != 2 {
		t.Errorf("no file: exit %d, want 2", code)
	}
	out.Reset()
	if code := runMain([]string{"config", "default"}, nil, &out, &errb); code != 0 || !strings.Contains(out.String(), "127.0.0.1:8402") {
		t.Errorf("config default: exit %d", code)
	}
}

func TestCAInit(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ca")
	var out, errb bytes.Buffer
	if code := runMain([]string{"ca", "init", "--out", dir}, nil, &out, &errb); code != 0 {
		t.Fatalf("ca init: exit %d: %s", code, errb.String())
	}
	st, err := os.Stat(filepath.Join(dir, "payguard-ca-key.pem"))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v %v", err, st)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "payguard-ca.pem")); !bytes.HasPrefix(b, []byte("-----BEGIN CERTIFICATE-----")) {
		t.Error("no PEM certificate written")
	}
	if code := runMain([]string{"ca", "init", "--out", dir}, nil, &out, &errb); code != 1 {
		t.Errorf("second ca init into the same dir: exit %d, want 1 (never overwrite a CA)", code)
	}
	if code := runMain([]string{"ca"}, nil, &out, &errb); code != 2 {
		t.Errorf("ca without init: exit %d, want 2", code)
	}
}

func TestProxyBadUsage(t *testing.T) {
	var out, errb bytes.Buffer
	if code := runMain([]string{"proxy", "--config", filepath.Join(t.TempDir(), "missing.yaml")}, nil, &out, &errb); code != 2 {
		t.Errorf("missing config: exit %d, want 2", code)
	}
	if code := runMain([]string{"proxy", "extra"}, nil, &out, &errb); code != 2 {
		t.Errorf("stray argument: exit %d, want 2", code)
	}
}

// bannerWriter hands the start-up summary to the test as soon as it is written.
type bannerWriter struct{ ch chan string }

func (b bannerWriter) Write(p []byte) (int, error) { b.ch <- string(p); return len(p), nil }

// runFirstStart runs the proxy with the embedded default configuration in the current directory (only the
// listeners moved to free ports, --offline) and returns the banner and a stop function.
func runFirstStart(t *testing.T) (banner string, stop func()) {
	t.Helper()
	cfg, err := config.Default()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	out := bannerWriter{ch: make(chan string, 1)}
	done := make(chan error, 1)
	ln := proxyListeners(t)
	go func() {
		done <- serveProxy(ln, ctx, cfg, app.Flags{Offline: true}, slog.New(slog.DiscardHandler), out)
	}()
	select {
	case banner = <-out.ch:
	case err := <-done:
		cancel()
		t.Fatalf("payguard proxy with the default config exited before listening: %v", err)
	}
	return banner, func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serveProxy: %v", err)
		}
	}
}

// bannerField reads the first word after "  name " in the banner.
func bannerField(t *testing.T, banner, name string) string {
	t.Helper()
	for _, line := range strings.Split(banner, "\n") {
		if rest, ok := strings.CutPrefix(line, "  "+name+" "); ok {
			if f := strings.Fields(rest); len(f) > 0 {
				return f[0]
			}
		}
	}
	t.Fatalf("banner has no %q line:\n%s", name, banner)
	return ""
}

// A fresh checkout: `payguard proxy` with no file and no manual step creates its state, listens, and says
// where, which certificate to trust and where the admin token is. A second start reuses all of it.
func TestProxyFirstRun(t *testing.T) {
	t.Setenv(apitoken.AdminEnv, "")
	dir := t.TempDir()
	t.Chdir(dir)
	banner, stop := runFirstStart(t)
	proxyURL := bannerField(t, banner, "proxy")
	adminURL := bannerField(t, banner, "admin API")
	caFile := bannerField(t, banner, "MITM CA")
	tokenFile := bannerField(t, banner, "admin token from")
	for _, want := range []string{
		filepath.Join(dir, "payguard-data", "ca", "payguard-ca.pem"), filepath.Join(dir, "payguard-data", "admin-token"),
		"HTTPS_PROXY=" + proxyURL, "NODE_EXTRA_CA_CERTS=" + caFile, "SSL_CERT_FILE=", "REQUESTS_CA_BUNDLE=", "CURL_CA_BUNDLE=" + caFile,
		"NOT READY", // no sanctions list: every payment is held, and the operator is told
	} {
		if !strings.Contains(banner, want) {
			t.Errorf("banner lacks %q:\n%s", want, banner)
		}
	}
	if !strings.HasPrefix(proxyURL, "http://127.0.0.1:") || !strings.HasPrefix(adminURL, "http://127.0.0.1:") {
		t.Fatalf("listeners %q %q", proxyURL, adminURL)
	}
	if st, err := os.Stat(filepath.Join(dir, "payguard-data", "ca", "payguard-ca-key.pem")); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("CA key: %v %v, want mode 0600", err, st)
	}
	for _, f := range []string{"payguard.db", "receipt-keys.json"} {
		if _, err := os.Stat(filepath.Join(dir, "payguard-data", f)); err != nil {
			t.Errorf("state file %s: %v", f, err)
		}
	}
	token, err := os.ReadFile(tokenFile)
	if err != nil {
		t.Fatal(err)
	}
	get := func(path, tok string) int {
		req, _ := http.NewRequest("GET", adminURL+path, nil)
		if tok != "" {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := get("/v1/budget", strings.TrimSpace(string(token))); code != 200 {
		t.Errorf("budget with the generated token = %d", code)
	}
	if code := get("/v1/budget", ""); code != 401 {
		t.Errorf("budget without a token = %d", code)
	}
	if code := get("/healthz", ""); code != 200 {
		t.Errorf("/healthz = %d", code)
	}
	if code := get("/readyz", ""); code != 503 {
		t.Errorf("/readyz without a sanctions list = %d, want 503", code)
	}
	ca, _ := os.ReadFile(caFile)
	stop()

	banner, stop = runFirstStart(t)
	defer stop()
	if again, _ := os.ReadFile(bannerField(t, banner, "MITM CA")); !bytes.Equal(again, ca) {
		t.Error("the second start replaced the CA agents already trust")
	}
	if again, _ := os.ReadFile(bannerField(t, banner, "admin token from")); !bytes.Equal(again, token) {
		t.Error("the second start replaced the admin token")
	}
}
