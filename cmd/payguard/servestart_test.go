package main

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/payguard/payguard/config"
	"github.com/payguard/payguard/internal/app"
	"github.com/payguard/payguard/server/fees"
)

// TestServeDefaultsCannotMislead: a copied default with only pay_to set does not start: there is no default
// contact (it published the project's address as the operator's) and no default facilitator for Base
// mainnet (the public one settles only on testnets, so every paid call failed). Both are said at once.
func TestServeDefaultsCannotMislead(t *testing.T) {
	t.Chdir(t.TempDir())
	path := filepath.Join(t.TempDir(), "serve.yaml")
	os.WriteFile(path, []byte("server:\n  fees:\n    pay_to: \"0xf54127927F219FB78C8D1A1fF3D7dc6D7f70C98E\"\n"), 0o600)
	var out, errb bytes.Buffer
	if code := runMain([]string{"serve", "--config", path, "--offline"}, nil, &out, &errb); code != 2 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, want := range []string{"server.contact is not set", "no default facilitator for eip155:8453", "https://x402.org/facilitator settles only on testnets"} {
		if !strings.Contains(errb.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, errb.String())
		}
	}
	if _, err := os.Stat("payguard-data"); err == nil {
		t.Error("a refused start created payguard-data")
	}
	// On the testnet the public facilitator is the default.
	fc := config.FeesConfig{Network: "eip155:84532"}
	if u, err := fc.Facilitator(); err != nil || u != config.PublicTestnetFacilitator {
		t.Errorf("testnet default: %q %v", u, err)
	}
}

// TestServeBanner: serve says at start where its page, OpenAPI and MCP are, what fees it takes, its
// facilitator (asked once), its contact, and whether paid calls work.
func TestServeBanner(t *testing.T) {
	fac := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"kinds":[{"x402Version":2,"scheme":"exact","network":"eip155:84532"},{"x402Version":1,"scheme":"exact","network":"base-sepolia"}]}`))
	}))
	defer fac.Close()
	dir := t.TempDir()
	cfg, err := config.Default()
	if err != nil {
		t.Fatal(err)
	}
	cfg.SetDataDir(dir)
	cfg.Server.Listen = "127.0.0.1:0"
	cfg.Server.Contact = "mailto:ops@example.com"
	cfg.Server.Fees.Network = "eip155:84532"
	cfg.Server.Fees.PayTo = "0xf54127927F219FB78C8D1A1fF3D7dc6D7f70C98E"
	cfg.Server.Fees.FacilitatorURL = fac.URL
	terms, err := fees.TermsFromConfig(cfg.Server.Fees)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	banner := bannerWriter{ch: make(chan string, 1)}
	done := make(chan error, 1)
	ln := serveListeners(t, cfg)
	go func() {
		done <- serveAPI(ln, ctx, cfg, terms, app.Flags{Offline: true, SanctionsDir: "testdata/check-sanctions"}, slog.New(slog.DiscardHandler), banner)
	}()
	var text string
	select {
	case text = <-banner.ch:
	case err := <-done:
		t.Fatalf("serve exited: %v", err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("serveAPI: %v", err)
	}
	for _, want := range []string{"payguard serve is running", "page         http://127.0.0.1:8080/", "/openapi.json", "/mcp",
		"fees         USDC on eip155:84532 to 0xf54127927F219FB78C8D1A1fF3D7dc6D7f70C98E", "facilitator  " + fac.URL + "  (reachable",
		"contact      mailto:ops@example.com", "Paid calls: READY"} {
		if !strings.Contains(text, want) {
			t.Errorf("banner lacks %q:\n%s", want, text)
		}
	}
}
