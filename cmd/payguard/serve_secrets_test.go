package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// buildPayguard builds this command's binary once per test that needs the real process.
func buildPayguard(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary and starts processes")
	}
	bin := filepath.Join(t.TempDir(), "payguard")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// serveConfig is a serve configuration on free ports, with extra lines under server.fees.
func serveConfig(t *testing.T, dir, addr, feesExtra string) string {
	t.Helper()
	cfg := `server:
  listen: ` + addr + `
  base_url: http://` + addr + `
  contact: mailto:security@example.com
  fees:
    network: eip155:84532
    pay_to: "0xf54127927F219FB78C8D1A1fF3D7dc6D7f70C98E"
` + feesExtra + `
store:
  driver: bolt
  path: ` + filepath.Join(dir, "payguard.db") + `
proxy:
  data_dir: ` + dir + `
keys:
  receipt_key_file: ` + filepath.Join(dir, "keys.json") + `
`
	path := filepath.Join(dir, "payguard.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// The facilitator's credentials have their own setting (a header from an environment variable or a file),
// are sent on every request to it, and appear in no document, log line or error of the real binary, even
// when the facilitator fails and reflects them in its answers. /health and /readyz on the public listener
// name the sanctions list's kind of source and its date, never its path. On the old code the credentials
// could only ride in facilitator_url's userinfo, published in full at /.well-known/x402 and /privacy and
// logged at start-up, and /health and /readyz showed the --sanctions-dir path.
func TestServeNeverPublishesFacilitatorCredentials(t *testing.T) {
	bin := buildPayguard(t)
	const secret = "Bearer pg-fac-Zq8v3N0tS3cr3t"
	var mu sync.Mutex
	seen := map[string][]string{} // path → Authorization values received
	fac := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen[r.URL.Path] = append(seen[r.URL.Path], r.Header.Get("Authorization"))
		mu.Unlock()
		// A failing facilitator that reflects what it received in its answers: none of it may travel on.
		w.WriteHeader(http.StatusServiceUnavailable)
		io.WriteString(w, `{"error":"upstream down","echo":"`+r.Header.Get("Authorization")+`"}`)
	}))
	defer fac.Close()

	cmd, base, sanctionsDir := serveCommand(t, bin,
		"    facilitator_url: "+fac.URL+"\n    facilitator_auth_header_env: PG_TEST_FACILITATOR_AUTH\n")
	cmd.Env = append(cmd.Env, "PG_TEST_FACILITATOR_AUTH="+secret)
	out := &syncLog{}
	cmd.Stdout = out // stdout too: no credential may appear in anything the process writes
	serve := startChild(t, cmd, out)
	serve.waitHealthz(t, "serve", base)

	get := func(method, path string, header map[string]string, body string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		for k, v := range header {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var hdr strings.Builder
		resp.Header.Write(&hdr)
		return resp.StatusCode, hdr.String() + "\n" + string(b)
	}
	// A v1 payment: it reaches /verify, which fails (503 facilitator_unavailable, nothing settled).
	pay, _ := json.Marshal(map[string]any{"x402Version": 1, "scheme": "exact", "network": "base-sepolia",
		"payload": map[string]any{"signature": "0x00", "authorization": map[string]any{"from": "0xf9A721373C534a2d7dbAad7b5bDF25BED26B51c1",
			"to": "0xf54127927F219FB78C8D1A1fF3D7dc6D7f70C98E", "value": "10000", "validAfter": "0", "validBefore": "1995323957",
			"nonce": "0x" + strings.Repeat("17", 32)}}})
	code, paid := get("GET", "/v1/check?address=0xabc", map[string]string{"X-PAYMENT": base64.StdEncoding.EncodeToString(pay)}, "")
	if code != http.StatusServiceUnavailable || !strings.Contains(paid, "facilitator_unavailable") {
		t.Fatalf("paid call with the facilitator failing: %d %s", code, paid)
	}
	answers := map[string]string{"paid call": paid}
	for _, p := range []string{"/.well-known/x402", "/privacy", "/status", "/health", "/readyz", "/healthz", "/terms",
		"/openapi.json", "/llms.txt", "/.well-known/agent-card.json", "/.well-known/mcp.json", "/v1/check?address=0xabc"} {
		_, answers[p] = get("GET", p, nil, "")
	}
	_, answers["mcp get_service_info"] = get("POST", "/mcp", map[string]string{"Content-Type": "application/json",
		"Accept": "application/json, text/event-stream"},
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_service_info","arguments":{}}}`)

	// The documents still name the facilitator (its URL), and /health and /readyz the list's kind and date.
	if !strings.Contains(answers["/.well-known/x402"], fac.URL) || !strings.Contains(answers["/privacy"], fac.URL) {
		t.Fatalf("the facilitator URL is not published:\n%s\n%s", answers["/.well-known/x402"], answers["/privacy"])
	}
	for _, p := range []string{"/health", "/readyz"} {
		if !strings.Contains(answers[p], `"source_kind":"directory"`) || !strings.Contains(answers[p], `"data_as_of"`) {
			t.Errorf("%s does not name the list's kind of source and date:\n%s", p, answers[p])
		}
	}

	logs := serve.stop(t, "serve")
	if !strings.Contains(logs, "payguard serve listening") || !strings.Contains(logs, "facilitator check failed") {
		t.Fatalf("the log lacks the start-up and facilitator lines:\n%s", logs)
	}
	answers["log"] = logs
	for where, text := range answers {
		for _, leak := range []string{secret, "pg-fac-Zq8v3N0tS3cr3t"} {
			if strings.Contains(text, leak) {
				t.Errorf("the facilitator credential appears in %s:\n%s", where, text)
			}
		}
		if where != "log" && strings.Contains(text, sanctionsDir) {
			t.Errorf("%s names the sanctions directory's path:\n%s", where, text)
		}
	}
	// The setting does something: every request to the facilitator carried the credential.
	mu.Lock()
	defer mu.Unlock()
	for _, p := range []string{"/supported", "/verify"} {
		if len(seen[p]) == 0 {
			t.Fatalf("the facilitator saw no %s (saw %v)", p, seen)
		}
		for _, v := range seen[p] {
			if v != secret {
				t.Fatalf("%s carried Authorization %q, want the configured credential", p, v)
			}
		}
	}
}

// Credentials in facilitator_url (user:password@) are refused at start, and the refusal does not repeat
// them; on the old code they were accepted, then published and logged.
func TestServeRefusesCredentialsInFacilitatorURL(t *testing.T) {
	bin := buildPayguard(t)
	dir := t.TempDir()
	for _, u := range []string{"https://payguard:hunter2-Pw0rd@facilitator.example", "https://:hunter2-Pw0rd@facilitator.example/x402",
		"https://payguard:hunter2-Pw0rd@facilitator.example/%zz"} {
		path := serveConfig(t, dir, freeAddr(t), "    facilitator_url: "+u+"\n")
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		out, err := exec.CommandContext(ctx, bin, "serve", "--config", path, "--offline").CombinedOutput()
		cancel()
		var exit *exec.ExitError
		if ok := errors.As(err, &exit); !ok || exit.ExitCode() != 2 {
			t.Fatalf("%s: %v, want exit 2\n%s", u, err, out)
		}
		if !bytes.Contains(out, []byte("server.fees.facilitator_url")) {
			t.Fatalf("%s: refused for another reason:\n%s", u, out)
		}
		if bytes.Contains(out, []byte("hunter2-Pw0rd")) {
			t.Fatalf("%s: the refusal repeats the password:\n%s", u, out)
		}
	}
}
