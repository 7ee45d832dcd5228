// Package egress decides how payguard's own outbound HTTP requests leave the process: the OFAC list download,
// RDAP and its bootstrap, the facilitator, webhooks. (The proxy's upstream transport and the Index prober
// never use a proxy at all: they must reach the real destination.)
//
// The rule (docs/proxy.md, "payguard's own traffic"): an egress proxy is an explicit setting (the config's
// egress.proxy); without one, HTTPS_PROXY / HTTP_PROXY / NO_PROXY from the environment are honoured only
// when they do not point at payguard itself. In the shell where README's exports are set, HTTPS_PROXY is
// payguard's own listener: following it would send payguard's lookups into its own MITM, where TLS fails and
// the sanctions list never loads. So a proxy address that is one of payguard's listeners (any spelling:
// localhost, 127.0.0.1, [::1], 0.0.0.0, a local interface's address, the same port) is ignored, and the
// first time that happens it is logged with the reason.
package egress

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/http/httpproxy"
)

// Direct is the egress.proxy value that ignores the environment's proxy variables altogether.
const Direct = "direct"

// Policy decides the proxy for payguard's own requests. The zero value is not usable; use New.
type Policy struct {
	mu       sync.Mutex
	explicit *url.URL // egress.proxy, when set to a URL
	direct   bool     // egress.proxy: direct
	env      func(*url.URL) (*url.URL, error)
	self     []string // host:port of payguard's listeners
	logger   *slog.Logger
	warned   map[string]bool
	// lookup resolves a proxy host name to decide whether it is this machine; replaceable in tests.
	lookup func(ctx context.Context, host string) ([]net.IP, error)
	// localAddrs lists this machine's interface addresses.
	localAddrs func() ([]net.IP, error)
}

// New returns a policy that follows the environment (read now) and knows no listener yet.
func New() *Policy {
	return &Policy{
		env:    httpproxy.FromEnvironment().ProxyFunc(),
		warned: map[string]bool{},
		lookup: func(ctx context.Context, host string) ([]net.IP, error) {
			return net.DefaultResolver.LookupIP(ctx, "ip", host)
		},
		localAddrs: interfaceAddrs,
	}
}

// Default is the process's policy: every outbound client payguard makes for itself uses it (Transport).
var Default = New()

// Configure sets the explicit egress proxy: "" follows the environment (except payguard itself), "direct"
// never uses a proxy, anything else is the proxy's URL (http or https scheme, a host and port). It also
// re-reads the environment, so a process configures once at start.
func (p *Policy) Configure(proxy string) error {
	u, direct, err := Parse(proxy)
	if err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.explicit, p.direct = u, direct
	p.env = httpproxy.FromEnvironment().ProxyFunc()
	return nil
}

// Parse checks an egress.proxy value (see Configure).
func Parse(proxy string) (u *url.URL, direct bool, err error) {
	switch strings.TrimSpace(proxy) {
	case "":
		return nil, false, nil
	case Direct:
		return nil, true, nil
	}
	u, err = url.Parse(proxy)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
		return nil, false, fmt.Errorf("egress.proxy %q: want %q or an http(s)://host:port URL", proxy, Direct)
	}
	return u, false, nil
}

// SetLogger sets where the policy says why it ignored a proxy.
func (p *Policy) SetLogger(l *slog.Logger) {
	p.mu.Lock()
	p.logger = l
	p.mu.Unlock()
}

// AddSelf records one of payguard's listeners (its bound address, host:port). Call it for every listener as
// soon as it is bound: a request made after that never goes to it.
func (p *Policy) AddSelf(addr string) {
	if addr == "" {
		return
	}
	p.mu.Lock()
	p.self = append(p.self, addr)
	p.mu.Unlock()
}

// Proxy is an http.Transport's Proxy function: the explicit proxy, else the environment's for req, and in
// either case nil (direct) when that proxy is payguard itself.
func (p *Policy) Proxy(req *http.Request) (*url.URL, error) {
	p.mu.Lock()
	explicit, direct, env, self := p.explicit, p.direct, p.env, append([]string(nil), p.self...)
	p.mu.Unlock()
	if direct {
		return nil, nil
	}
	source := "egress.proxy"
	u := explicit
	if u == nil {
		source = "the environment's HTTPS_PROXY/HTTP_PROXY"
		var err error
		if u, err = env(req.URL); err != nil || u == nil {
			return nil, err
		}
	}
	if p.isSelf(req.Context(), u, self) {
		p.warnOnce(u, source, req.URL.Host)
		return nil, nil
	}
	return u, nil
}

func (p *Policy) warnOnce(u *url.URL, source, target string) {
	p.mu.Lock()
	log, seen := p.logger, p.warned[u.Host]
	p.warned[u.Host] = true
	p.mu.Unlock()
	if seen {
		return
	}
	if log == nil {
		log = slog.Default()
	}
	log.Warn("egress: ignoring "+source+": it points at payguard's own listener, and payguard never proxies its own "+
		"requests (list download, RDAP, facilitator, webhooks) through itself; they go direct. Set egress.proxy to "+
		"an egress proxy, or to direct to silence this", "proxy", u.Redacted(), "first_request_to", target)
}

// isSelf reports whether proxy u is one of payguard's listeners: the same port, and a host that is the
// listener's own host, or this machine (loopback, an unspecified listener's any-address, a local interface,
// or a name that resolves to one of those).
func (p *Policy) isSelf(ctx context.Context, u *url.URL, self []string) bool {
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	host := strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
	var hostIPs []net.IP // resolved lazily, once
	resolved := false
	for _, s := range self {
		sh, sp, err := net.SplitHostPort(s)
		if err != nil || sp != port {
			continue
		}
		sh = strings.ToLower(sh)
		if sh == host {
			return true
		}
		if !resolved {
			resolved = true
			hostIPs = p.resolve(ctx, host)
		}
		listenIP := net.ParseIP(sh)
		unspecified := sh == "" || (listenIP != nil && listenIP.IsUnspecified())
		for _, ip := range hostIPs {
			switch {
			case listenIP != nil && listenIP.Equal(ip):
				return true
			case ip.IsLoopback() && (unspecified || (listenIP != nil && listenIP.IsLoopback()) || sh == "localhost"):
				return true
			case ip.IsUnspecified(): // a proxy at 0.0.0.0:port is this machine
				return true
			case unspecified && p.isLocal(ip):
				return true
			}
		}
	}
	return false
}

// resolve is host's addresses: the literal, localhost's loopbacks, else a DNS lookup bounded to a second
// (a name that does not resolve is not this machine).
func (p *Policy) resolve(ctx context.Context, host string) []net.IP {
	if ip := net.ParseIP(host); ip != nil {
		return []net.IP{ip}
	}
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}
	}
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	ips, _ := p.lookup(ctx, host)
	return ips
}

func (p *Policy) isLocal(ip net.IP) bool {
	addrs, err := p.localAddrs()
	if err != nil {
		return false
	}
	for _, a := range addrs {
		if a.Equal(ip) {
			return true
		}
	}
	return false
}

func interfaceAddrs() ([]net.IP, error) {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil, err
	}
	out := make([]net.IP, 0, len(addrs))
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok {
			out = append(out, n.IP)
		}
	}
	return out, nil
}

// Transport is a clone of http.DefaultTransport whose proxy is Default's decision: what every outbound
// client payguard makes for itself starts from.
func Transport() *http.Transport {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = Default.Proxy
	return tr
}

// Setup is how a payguard process configures p once, before its first outbound request: the configured
// egress.proxy (Configure), the logger, and every address of this process (configured and bound), so that a
// proxy variable pointing at any of them is ignored and logged instead of looping payguard through itself.
func (p *Policy) Setup(proxy string, log *slog.Logger, self ...string) error {
	if err := p.Configure(proxy); err != nil {
		return err
	}
	p.SetLogger(log)
	for _, a := range self {
		p.AddSelf(a)
	}
	return nil
}
