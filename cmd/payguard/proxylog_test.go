package main

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The proxy's log is buffered (internal/logout), and what waits is written when it stops: a decision logged
// just before SIGTERM, and the "shutting down" line logged on it, are both in its stderr after it exits.
func TestProxyLogWrittenAtShutdown(t *testing.T) {
	bin := buildPayguard(t)
	challenge := base64.StdEncoding.EncodeToString([]byte(`{"x402Version":2,"resource":{"url":"http://seller/x"},` +
		`"accepts":[{"scheme":"exact","network":"eip155:84532","amount":"10000","asset":"0x036CbD53842c5426634e7929541eC2318f3dCF7e",` +
		`"payTo":"0xf54127927F219FB78C8D1A1fF3D7dc6D7f70C98E","maxTimeoutSeconds":60,"extra":{"name":"USDC","version":"2"}}]}`))
	seller := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("PAYMENT-REQUIRED", challenge)
		w.WriteHeader(http.StatusPaymentRequired)
	}))
	defer seller.Close()
	dir := t.TempDir()
	proxyAddr, adminAddr := freeAddr(t), freeAddr(t)
	cfg := fmt.Sprintf("proxy:\n  listen: %q\nadmin:\n  listen: %q\ndata_dir: %q\nscreening:\n  sanctions: {enabled: false}\n"+
		"  domain: {enabled: false}\nrules:\n  allowed_networks: [\"eip155:84532\"]\n  screen_sanctions: false\n  require_live: false\n"+
		"  new_domain_days: 0\n", proxyAddr, adminAddr, dir)
	path := filepath.Join(dir, "payguard.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "proxy", "--config", path, "--offline")
	cmd.Env = append(os.Environ(), "PAYGUARD_ADMIN_TOKEN=proxylog-test-token-0123456789")
	proxy := startChild(t, cmd, &syncLog{})
	proxyURL, _ := url.Parse("http://" + proxyAddr)
	client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxyURL)}, Timeout: 30 * time.Second}
	var resp *http.Response
	proxy.waitUp(t, "the proxy", func() (err error) {
		resp, err = client.Get(seller.URL + "/x")
		return err
	})
	resp.Body.Close()
	if resp.Header.Get("X-Payguard-Decision") == "" {
		t.Fatalf("the 402 was not decided: %d %v", resp.StatusCode, resp.Header)
	}
	logs := proxy.stop(t, "the proxy")
	for _, want := range []string{`"msg":"decision","stage":"challenge"`, `"msg":"shutting down"`} {
		if !strings.Contains(logs, want) {
			t.Errorf("the log after SIGTERM lacks %s:\n%s", want, logs)
		}
	}
}
