package egress

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
)

// policy is a Policy whose environment proxy is envProxy, with a fixed resolver and interface list.
func policy(t *testing.T, envProxy string, self ...string) (*Policy, *syncBuffer) {
	t.Helper()
	p := New()
	p.env = func(*url.URL) (*url.URL, error) {
		if envProxy == "" {
			return nil, nil
		}
		return url.Parse(envProxy)
	}
	p.lookup = func(_ context.Context, host string) ([]net.IP, error) {
		switch host {
		case "payguard-sidecar": // a name for this machine
			return []net.IP{net.ParseIP("10.1.2.3")}, nil
		case "corp-proxy":
			return []net.IP{net.ParseIP("10.9.9.9")}, nil
		}
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	p.localAddrs = func() ([]net.IP, error) {
		return []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback, net.ParseIP("10.1.2.3")}, nil
	}
	var logs syncBuffer
	p.SetLogger(slog.New(slog.NewJSONHandler(&logs, nil)))
	for _, s := range self {
		p.AddSelf(s)
	}
	return p, &logs
}

func proxyFor(t *testing.T, p *Policy, target string) *url.URL {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, target, nil)
	u, err := p.Proxy(req)
	if err != nil {
		t.Fatalf("Proxy(%s): %v", target, err)
	}
	return u
}

// TestSelfIsNeverTheProxy: every spelling of payguard's own listener as HTTPS_PROXY is ignored (nil: go
// direct) and the reason is logged once; any other proxy is honoured.
func TestSelfIsNeverTheProxy(t *testing.T) {
	const ofac = "https://sanctionslistservice.ofac.treas.gov/api/download/sdn.csv"
	cases := []struct {
		listen, env string
		self        bool
	}{
		{"127.0.0.1:8402", "http://127.0.0.1:8402", true},
		{"127.0.0.1:8402", "http://localhost:8402", true},
		{"127.0.0.1:8402", "http://LOCALHOST.:8402/", true},
		{"127.0.0.1:8402", "http://[::1]:8402", true},
		{"127.0.0.1:8402", "http://0.0.0.0:8402", true},
		{"127.0.0.1:8402", "http://127.0.0.2:8402", true}, // loopback is this machine
		{"0.0.0.0:8402", "http://10.1.2.3:8402", true},    // an interface of this machine, listener on all
		{":8402", "http://payguard-sidecar:8402", true},   // a name for this machine
		{"[::]:8402", "http://127.0.0.1:8402", true},
		{"127.0.0.1:8403", "http://127.0.0.1:8403", true}, // the admin listener is payguard too
		{"127.0.0.1:80", "http://localhost", true},        // the scheme's port
		{"127.0.0.1:8402", "http://127.0.0.1:3128", false},
		{"127.0.0.1:8402", "http://corp-proxy:8402", false},
		{"127.0.0.1:8402", "http://10.1.2.3:8402", false}, // the listener is on loopback only: not the same socket
		{"127.0.0.1:8402", "http://unknown-host:8402", false},
	}
	for _, c := range cases {
		p, logs := policy(t, c.env, c.listen)
		got := proxyFor(t, p, ofac)
		if c.self && got != nil {
			t.Errorf("listen %s, HTTPS_PROXY %s: proxied through %v, want direct", c.listen, c.env, got)
		}
		if !c.self && (got == nil || got.String() != strings.TrimSuffix(c.env, "/")) {
			t.Errorf("listen %s, HTTPS_PROXY %s: got %v, want the proxy honoured", c.listen, c.env, got)
		}
		if c.self {
			proxyFor(t, p, "https://rdap.org/domain/example.com")
			if n := strings.Count(logs.String(), "points at payguard's own listener"); n != 1 {
				t.Errorf("listen %s, HTTPS_PROXY %s: %d log lines saying why, want 1:\n%s", c.listen, c.env, n, logs.String())
			}
		}
	}
}

// TestExplicitEgressProxy: egress.proxy wins over the environment; "direct" ignores the environment; an
// explicit proxy that is payguard itself is ignored too; a bad value is refused.
func TestExplicitEgressProxy(t *testing.T) {
	p, _ := policy(t, "http://127.0.0.1:8402", "127.0.0.1:8402")
	if err := p.Configure("http://corp-proxy:3128"); err != nil {
		t.Fatal(err)
	}
	p.env = func(*url.URL) (*url.URL, error) { return url.Parse("http://127.0.0.1:8402") }
	if u := proxyFor(t, p, "https://example.com/"); u == nil || u.Host != "corp-proxy:3128" {
		t.Errorf("explicit proxy: %v", u)
	}
	p.env = func(*url.URL) (*url.URL, error) { return url.Parse("http://other:3128") }
	p.direct, p.explicit = true, nil
	if u := proxyFor(t, p, "https://example.com/"); u != nil {
		t.Errorf("direct: %v", u)
	}
	p.direct, p.explicit = false, &url.URL{Scheme: "http", Host: "localhost:8402"}
	if u := proxyFor(t, p, "https://example.com/"); u != nil {
		t.Errorf("explicit proxy that is payguard itself: %v", u)
	}
	for _, bad := range []string{"corp-proxy:3128", "socks5://x:1080", "http://", "::"} {
		if _, _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) accepted", bad)
		}
	}
}

// TestNoProxyStillHonoured: with no proxy set, nothing changes (direct).
func TestNoProxyStillHonoured(t *testing.T) {
	p, _ := policy(t, "", "127.0.0.1:8402")
	if u := proxyFor(t, p, "https://example.com/"); u != nil {
		t.Errorf("no proxy: %v", u)
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
