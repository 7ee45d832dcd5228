package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// serve's log is buffered as the proxy's (internal/logout): the request line of a preflight answered just
// before SIGTERM, and the "shutting down" line logged on it, are both in its stderr after it exits, whole.
func TestServeLogWrittenAtShutdown(t *testing.T) {
	bin := buildPayguard(t)
	fac := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "down", http.StatusServiceUnavailable)
	}))
	defer fac.Close()
	cmd, base, _ := serveCommand(t, bin, "    facilitator_url: "+fac.URL+"\n")
	serve := startChild(t, cmd, &syncLog{})
	serve.waitHealthz(t, "serve", base)
	body := `{"challenge":{"x402Version":2,"resource":{"url":"https://api.example.com/data"},"accepts":[{"scheme":"exact",` +
		`"network":"eip155:8453","amount":"10000","asset":"0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",` +
		`"payTo":"0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC","maxTimeoutSeconds":60,"extra":{"name":"USD Coin","version":"2"}}]}}`
	resp, err := http.Post(base+"/v1/preflight?trial=1", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("preflight: %d", resp.StatusCode)
	}
	logs := serve.stop(t, "serve")
	var request string
	for _, l := range strings.Split(logs, "\n") {
		if strings.Contains(l, `"msg":"request"`) && strings.Contains(l, `"path":"/v1/preflight"`) {
			request = l
		}
	}
	if !strings.Contains(request, `"status":200`) || !strings.Contains(request, `"payment":"trial"`) ||
		!strings.Contains(request, `"receipt_id":"`) || !strings.HasSuffix(request, "}") {
		t.Errorf("the log after SIGTERM lacks the preflight's whole request line:\n%s", logs)
	}
	if !strings.Contains(logs, `"msg":"shutting down"`) {
		t.Errorf("the log after SIGTERM lacks the shutting-down line:\n%s", logs)
	}
}
