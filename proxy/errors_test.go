package proxy

import (
	"crypto/tls"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/payguard/payguard/internal/errbody"
	"github.com/payguard/payguard/internal/logbuf"
	"github.com/payguard/payguard/internal/testutil"
	"github.com/payguard/payguard/store/memory"
	"github.com/payguard/payguard/x402"
)

func withLog(buf *logbuf.Buffer) harnessOption {
	return func(su *setup) { su.Logger = slog.New(slog.NewJSONHandler(buf, nil)) }
}

// decodeProxyError reads a generated error: JSON with a stable code and a hint.
func decodeProxyError(t *testing.T, resp *http.Response, body []byte, status int, code string) errbody.Error {
	t.Helper()
	if resp.StatusCode != status {
		t.Fatalf("status %d, want %d: %s", resp.StatusCode, status, body)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q, want application/json", ct)
	}
	var e errbody.Error
	if err := json.Unmarshal(body, &e); err != nil {
		t.Fatalf("body is not JSON: %v: %s", err, body)
	}
	if e.Code != code || e.Hint == "" || e.Message == "" {
		t.Fatalf("error %+v, want code %s with a message and a hint", e, code)
	}
	return e
}

// An upstream whose certificate payguard does not trust: the agent gets 502 JSON that names the setting
// which trusts a private CA, and the log says why at warn.
func TestUpstreamTLSFailureIsExplained(t *testing.T) {
	var logs logbuf.Buffer
	s := newSeller(t, x402.V2, true, offer(x402.V2, "eip155:84532", baseSepoliaUSDC, sellerPayTo, cent))
	h := newHarness(t, memory.New(), testRules(), withLog(&logs)) // the seller's self-signed CA is not trusted
	resp, body := h.buyer().get(s.url("/x"), nil)
	e := decodeProxyError(t, resp, body, http.StatusBadGateway, "upstream_tls_untrusted")
	if !strings.Contains(e.Hint, "proxy.upstream_ca_files") {
		t.Errorf("hint %q does not name proxy.upstream_ca_files", e.Hint)
	}
	line := logLine(t, &logs, "upstream error")
	if line["level"] != "WARN" || line["error"] != "upstream_tls_untrusted" || !strings.Contains(line["cause"].(string), "certificate") {
		t.Errorf("log line %v", line)
	}
}

// An upstream nobody listens on: 502 upstream_unreachable.
func TestUpstreamUnreachableIsJSON(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	h := newHarness(t, memory.New(), testRules())
	resp, body := h.buyer().get("http://"+addr+"/x", nil)
	decodeProxyError(t, resp, body, http.StatusBadGateway, "upstream_unreachable")
}

// A request sent to the proxy as if it were the origin: 400 JSON, with the fix.
func TestNonProxyRequestIsJSON(t *testing.T) {
	h := newHarness(t, memory.New(), testRules())
	resp, err := http.Get(h.srv.URL + "/hello")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	e := decodeProxyError(t, resp, body, http.StatusBadRequest, "not_a_proxy_request")
	if !strings.Contains(e.Hint, "HTTPS_PROXY") {
		t.Errorf("hint %q", e.Hint)
	}
}

// A refused payment's 403 carries a stable code, its class and a hint besides the decision.
func TestRefusalHasCodeAndHint(t *testing.T) {
	s := newSeller(t, x402.V2, false, offer(x402.V2, "eip155:84532", baseSepoliaUSDC, sanctionedPayTo, cent))
	h := newHarness(t, memory.New(), testRules())
	resp, body := h.buyer().get(s.url("/x"), nil)
	var r struct {
		Error, ReasonClass, Hint, Decision string
	}
	decodeRefusal(t, resp, body)
	if err := json.Unmarshal(body, &r); err != nil {
		t.Fatal(err)
	}
	if r.Error != "payment_blocked" || r.Decision != "block" || r.Hint == "" {
		t.Errorf("refusal %s", body)
	}
	if !strings.Contains(string(body), `"reason_class":"sanctions"`) {
		t.Errorf("refusal lacks its class: %s", body)
	}
}

// An agent that does not trust payguard's CA: its handshake fails, and payguard logs it at warn with the
// client's address, the host and the cause (goproxy alone logged nothing at the default level).
func TestAgentHandshakeFailureIsLogged(t *testing.T) {
	var logs logbuf.Buffer
	h := newHarness(t, memory.New(), testRules(), withLog(&logs))
	u, _ := url.Parse(h.srv.URL)
	tr := &http.Transport{Proxy: http.ProxyURL(u), TLSClientConfig: &tls.Config{}} // system roots: not payguard's CA
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	if resp, err := client.Get("https://seller.example/x"); err == nil {
		resp.Body.Close()
		t.Fatal("an agent without payguard's CA completed a handshake")
	}
	line := logLine(t, &logs, "agent TLS handshake failed")
	client_, _ := line["client"].(string)
	if line["level"] != "WARN" || !strings.HasPrefix(client_, "127.0.0.1:") || line["host"] != "seller.example:443" ||
		!strings.Contains(line["cause"].(string), "certificate") || !strings.Contains(line["hint"].(string), "CA") {
		t.Errorf("log line %v", line)
	}
}

// logLine waits (up to 10 s: goproxy logs from its connection goroutine) for the JSON log line with msg.
func logLine(t *testing.T, logs *logbuf.Buffer, msg string) map[string]any {
	t.Helper()
	var line map[string]any
	testutil.Eventually(t, 10*time.Second, func() bool {
		for _, l := range strings.Split(logs.String(), "\n") {
			var m map[string]any
			if json.Unmarshal([]byte(l), &m) == nil && m["msg"] == msg {
				line = m
				return true
			}
		}
		return false
	}, "a %q log line", msg)
	return line
}

// --log-level debug shows goproxy's own messages (it printed nothing with Verbose off); info does not.
func TestDebugLevelShowsGoproxy(t *testing.T) {
	s := newSeller(t, x402.V2, false, offer(x402.V2, "eip155:84532", baseSepoliaUSDC, sellerPayTo, cent))
	for _, level := range []slog.Level{slog.LevelDebug, slog.LevelInfo} {
		var logs logbuf.Buffer
		h := newHarness(t, memory.New(), testRules(), func(su *setup) {
			su.Logger = slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: level}))
		})
		h.buyer().get(s.url("/x"), nil)
		if level == slog.LevelDebug {
			line := logLine(t, &logs, "goproxy")
			if l, _ := line["line"].(string); line["level"] != "DEBUG" || l == "" {
				t.Errorf("goproxy line %v", line)
			}
		} else if strings.Contains(logs.String(), `"msg":"goproxy"`) {
			t.Errorf("info level shows goproxy's debug lines:\n%s", logs.String())
		}
	}
}
