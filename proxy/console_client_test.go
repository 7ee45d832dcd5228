package proxy

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"testing"
)

// consoleClient is a browser-like client of the console: a cookie jar, the same Origin as the page.
type consoleClient struct {
	t      *testing.T
	base   string
	client *http.Client
	csrf   string
}

func newConsoleClient(t *testing.T, base string) *consoleClient {
	jar, _ := cookiejar.New(nil)
	return &consoleClient{t: t, base: base, client: &http.Client{Jar: jar}}
}

// post sends JSON; hdr adds or replaces headers (Origin defaults to the console's own).
func (c *consoleClient) post(path string, body any, hdr map[string]string) (int, []byte) {
	c.t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest("POST", c.base+path, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Origin", c.base)
	if c.csrf != "" {
		req.Header.Set("X-CSRF-Token", c.csrf)
	}
	for k, v := range hdr {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := c.client.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, out
}

func (c *consoleClient) get(path string) (*http.Response, []byte) {
	c.t.Helper()
	resp, err := c.client.Get(c.base + path)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp, out
}

func (c *consoleClient) signIn(token string) int {
	c.t.Helper()
	code, out := c.post("/console/session", map[string]string{"token": token}, nil)
	if code == 200 {
		var s struct{ CSRF string }
		_ = json.Unmarshal(out, &s)
		c.csrf = s.CSRF
	}
	return code
}

// heldRequest makes one real hold: a $0.50 challenge through the proxy (hold_above_usd 0.25, hold_wait 0).
func heldRequest(t *testing.T, h *harness, s *seller) string {
	t.Helper()
	resp, body := h.buyer().get(s.url("/report"), nil)
	id := resp.Header.Get(HeaderHold)
	if resp.StatusCode != http.StatusForbidden || id == "" {
		t.Fatalf("want a hold: %d %s", resp.StatusCode, body)
	}
	return id
}
