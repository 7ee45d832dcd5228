package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/payguard/payguard/config"
	"github.com/payguard/payguard/internal/app"
	"github.com/payguard/payguard/internal/testutil"
	"github.com/payguard/payguard/server/fees"
)

func TestServeUsage(t *testing.T) {
	var out, errb bytes.Buffer
	if code := runServe([]string{"--nope"}, nil, &out, &errb); code != 2 {
		t.Fatalf("bad flag: exit %d", code)
	}
	// The embedded default has no pay_to: serve refuses to start, as bad input.
	if code := runServe(nil, nil, &out, &errb); code != 2 || !strings.Contains(errb.String(), "pay_to") {
		t.Fatalf("no pay_to: exit %d: %s", code, errb.String())
	}
}

// TestServeWiring runs the real command's wiring (bolt store, receipt keys, sanctions list, engine, checker)
// on loopback: a trial preflight is decided and signed, an unpaid call gets both challenge forms, the keys
// are published, and the server stops cleanly when its context ends.
func TestServeWiring(t *testing.T) {
	dir := t.TempDir()
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
	base := "http://" + addr
	var resp *http.Response
	for i := 0; i < 200; i++ {
		if resp, err = http.Get(base + "/health"); err == nil {
			break
		}
		time.Sleep(25 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("/health %d", resp.StatusCode)
	}

	body := `{"challenge":{"x402Version":2,"resource":{"url":"https://api.example.com/x"},"accepts":[{"scheme":"exact",` +
		`"network":"eip155:8453","amount":"10000","asset":"0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",` +
		`"payTo":"0x098B716B8Aaf21512996dC57EB0615e2383E2f96","maxTimeoutSeconds":60,"extra":{"name":"USD Coin","version":"2"}}]}}`
	resp, err = http.Post(base+"/v1/preflight?trial=1", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Decision string   `json:"decision"`
		Reasons  []string `json:"reasons"`
		Receipt  struct {
			JWS string `json:"jws"`
		} `json:"receipt"`
	}
	json.NewDecoder(resp.Body).Decode(&res)
	resp.Body.Close()
	// The payTo is LAZARUS GROUP's wallet in the SDN excerpt: the real engine must block it.
	if resp.StatusCode != 200 || res.Decision != "block" || strings.Count(res.Receipt.JWS, ".") != 2 {
		t.Fatalf("%d %+v", resp.StatusCode, res)
	}

	// serve's /v1/preflight decides upto options with the same engine (issue 38): judged by the maximum.
	for _, c := range []struct{ amount, decision, reason, scheme string }{
		{"200000", "allow", "allow: all rules passed", "upto"},
		{"5000000", "block", "block: upto maximum $5 exceeds max $1", ""},
	} {
		upto := `{"challenge":{"x402Version":2,"resource":{"url":"https://api.example.com/llm"},"accepts":[{"scheme":"upto",` +
			`"network":"eip155:8453","amount":"` + c.amount + `","asset":"0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",` +
			`"payTo":"0xf54127927F219FB78C8D1A1fF3D7dc6D7f70C98E","maxTimeoutSeconds":300,` +
			`"extra":{"name":"USD Coin","version":"2","assetTransferMethod":"permit2","facilitatorAddress":"0x3333333333333333333333333333333333333333"}}]}}`
		resp, err = http.Post(base+"/v1/preflight?trial=1", "application/json", strings.NewReader(upto))
		if err != nil {
			t.Fatal(err)
		}
		var up struct {
			Decision string   `json:"decision"`
			Reasons  []string `json:"reasons"`
			Chosen   *struct {
				Scheme string `json:"scheme"`
			} `json:"chosen_option"`
		}
		json.NewDecoder(resp.Body).Decode(&up)
		resp.Body.Close()
		scheme := ""
		if up.Chosen != nil {
			scheme = up.Chosen.Scheme
		}
		if resp.StatusCode != 200 || up.Decision != c.decision || len(up.Reasons) != 1 || up.Reasons[0] != c.reason || scheme != c.scheme {
			t.Fatalf("upto %s: %d %+v", c.amount, resp.StatusCode, up)
		}
	}

	resp, err = http.Get(base + "/v1/check?address=0xabc")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	hdr, _ := base64.StdEncoding.DecodeString(resp.Header.Get("PAYMENT-REQUIRED"))
	if resp.StatusCode != 402 || !bytes.Contains(hdr, []byte(`"amount":"10000"`)) || !bytes.Contains(b, []byte(`"maxAmountRequired":"10000"`)) {
		t.Fatalf("%d %s %s", resp.StatusCode, hdr, b)
	}

	resp, err = http.Get(base + "/.well-known/payguard-keys.json")
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if !bytes.Contains(b, []byte(`"kty":"EC"`)) || bytes.Contains(b, []byte(`"d":`)) {
		t.Fatalf("jwks %s", b)
	}

	resp, err = http.Get("http://" + metricsAddr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if !bytes.Contains(b, []byte(`payguard_server_requests_total{code="200",route="/v1/preflight"} 3`)) ||
		!bytes.Contains(b, []byte(`payguard_server_trial_calls_total{result="granted"} 3`)) ||
		!bytes.Contains(b, []byte(`payguard_build_info{commit="`)) {
		t.Fatalf("metrics:\n%s", b)
	}
	// As the proxy: the Go runtime's and the process's series, and the sanctions list's gauges (from
	// --sanctions-dir), and the probes.
	for _, want := range []string{"go_goroutines ", "process_cpu_seconds_total ", "payguard_sanctions_list_age_seconds ", "payguard_sanctions_list_loaded 1"} {
		if !bytes.Contains(b, []byte(want)) {
			t.Errorf("serve's /metrics lacks %q", want)
		}
	}
	for _, probe := range []string{"/healthz", "/readyz"} {
		if resp, err := http.Get(base + probe); err != nil || resp.StatusCode != 200 {
			t.Errorf("serve %s: %v %v", probe, resp, err)
		} else {
			resp.Body.Close()
		}
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("shutdown: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not stop")
	}
}
