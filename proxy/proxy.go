package proxy

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/elazarl/goproxy"

	"github.com/payguard/payguard/config"
	"github.com/payguard/payguard/policy"
	"github.com/payguard/payguard/preflight"
	"github.com/payguard/payguard/proxy/mitm"
	"github.com/payguard/payguard/store"
)

// Decider is the preflight engine as the proxy sees it; *preflight.Engine implements it. The proxy decides
// unsigned and signs the receipts it shows: refusals and holds carry the signed receipt, while an allowed
// challenge goes on with the receipt id alone (X-Payguard-Receipt on the paid response, the log line), so its
// signature would be work nobody receives.
type Decider interface {
	DecideUnsigned(ctx context.Context, in *preflight.Input) (*preflight.Result, error)
	SignReceipt(res *preflight.Result, in *preflight.Input) error
}

// State is the part of the store the proxy uses: the budget ledger, holds and tickets, and the hosts that
// answered 402 (store.Sellers, for proxy.upgrades' refuse_after_402). Every store has them (memory for one
// process, bolt and redis across restarts and replicas; storetest requires each): a capability the proxy
// needs is in this interface, not discovered by a type assertion at run time.
type State interface {
	store.Ledger
	store.Holds
	store.Tickets
	store.Sellers
}

// Options configure a Proxy. Decider, Store and CA are required.
type Options struct {
	Decider Decider
	Store   State
	// CA signs the MITM leaf certificates. Never goproxy's built-in CA: its key is public.
	CA *tls.Certificate
	// Rules are the deployment's rules; the proxy reads only DailyCapUSD, for the ledger's final guard.
	Rules policy.Rules
	// Budget names the ledger budget (config's default, "default", when empty).
	Budget string
	// TunnelHosts are passed through without inspection ("host" or "host:port").
	TunnelHosts []string
	// Upgrades is what happens to requests that switch protocols (upgrade.go); "" is refuse_after_402.
	Upgrades UpgradePolicy
	// UpstreamRoots are trusted for upstream TLS; nil means the system roots.
	UpstreamRoots *x509.CertPool
	// HoldWait is how long a held 402 waits for a person; HoldTTL how long a hold stays usable.
	HoldWait, HoldTTL time.Duration
	// TicketTTLMax bounds an allowed 402's ticket (its maxTimeoutSeconds, at least a minute, up to this):
	// unused, it gives its reservation back (store.Tickets). Zero means config's default (5 minutes).
	TicketTTLMax time.Duration
	// MaxUnpaidPerSite bounds the tickets of allowed 402s outstanding (not paid, not yet released) per seller
	// site; past it an allow is refused with the unpaid_tickets_per_site reason (unpaid.go). Zero means
	// config's default (1,000).
	MaxUnpaidPerSite int
	// RetryAfter is the Retry-After sent with an unresolved hold (default 10 s).
	RetryAfter time.Duration
	// CertCacheSize bounds the MITM leaf cache (zero: config's default, 1024).
	CertCacheSize int
	// MaxIdleConnsPerHost sizes the upstream idle pool (zero: config's default, 256).
	MaxIdleConnsPerHost int
	// DialContext replaces the upstream dialer (tests and load runs map many names to loopback).
	DialContext func(ctx context.Context, network, addr string) (net.Conn, error)
	Now         func() time.Time
	Logger      *slog.Logger
	Metrics     *Metrics
	// Observer, when set, receives an Endpoint Index observation of every decoded 402 and every paid
	// response (see observe.go).
	Observer Observer
	// Index, when set, is read once per challenge, before the engine, to warm the engine's view when it is
	// the engine's index.Cache (observations older than IndexMaxAge are left out of its derived facts; 0 keeps
	// all). The admin API's GET /v1/endpoints reads it through proxy/admin's Options.
	Index       preflight.IndexReader
	IndexMaxAge time.Duration
	// OnHoldChange is called (it must not block) after a hold is created or resolved here, so that
	// notifications go out at once (proxy/notify's Watcher.Kick).
	OnHoldChange func()
	// RuleSet, when set, is the initial rule set (agents, modes, per-agent rules: ruleset.go); nil means the
	// global Rules decided by Decider, for every agent, with unauthenticated agents let in as "default".
	// Reload replaces it.
	RuleSet *RuleSet
	// Journal, when set, receives every decision with its signed receipt (journal.go).
	Journal *Journal
	// Reloader, when set, rereads and validates the configuration into a new rule set, for ReloadNow (POST
	// /v1/reload on the admin listener, proxy/admin) and SIGHUP (reload.go).
	Reloader func() (*RuleSet, error)
}

// Proxy is an http.Handler for the agent's proxy traffic.
type Proxy struct {
	opts    Options
	gp      *goproxy.ProxyHttpServer
	tr      *http.Transport
	certs   *mitm.CertCache
	tunnel  map[string]bool
	waiters *holdWaiters
	alarms  store.Alarms    // sellers whose settlement broke its authorization (alarms.go)
	paid    *paidHosts      // hosts that answered 402 (proxy.upgrades: refuse_after_402)
	splices *splices        // upgraded connections open, by host
	sellers store.Sellers   // the store's hosts that answered 402 (upgrade.go)
	recent  recentDecisions // the last decisions, for the console
	log     *slog.Logger
	metrics *Metrics
	clients sync.Map                // goproxy session (mod 65536) → the MITM'd client's address (goproxylog.go)
	unpaid  *unpaidTickets          // outstanding tickets per seller site (unpaid.go)
	rt      goproxy.RoundTripper    // p.roundTrip, made once (a method value allocates each time it is taken)
	rs      atomic.Pointer[RuleSet] // the active rules, agents and modes (ruleset.go; Reload swaps it)
	today   atomic.Pointer[dayName] // the last day named by day(), so that each decision does not format it
	// challenges memoises the decode and narrowing of repeated PAYMENT-REQUIRED headers (challengememo.go).
	challenges *challengeMemo
}

// New builds a proxy.
func New(o Options) (*Proxy, error) {
	if o.Decider == nil || o.Store == nil {
		return nil, errors.New("proxy: a preflight engine and a store are required")
	}
	upgrades, err := ParseUpgradePolicy(string(o.Upgrades))
	if err != nil {
		return nil, err
	}
	o.Upgrades = upgrades
	if o.Budget == "" {
		o.Budget = config.DefaultProxy().Budget
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Metrics == nil {
		o.Metrics = NewMetrics()
	}
	// The defaults of the settings the proxy: section has are config's, stated once there.
	def := config.DefaultProxy()
	if o.TicketTTLMax <= 0 {
		o.TicketTTLMax = time.Duration(def.TicketTTLMax)
	}
	if o.MaxUnpaidPerSite <= 0 {
		o.MaxUnpaidPerSite = def.MaxUnpaidPerSite
	}
	if o.HoldTTL <= 0 {
		o.HoldTTL = time.Duration(def.HoldTTL)
	}
	if o.RetryAfter <= 0 {
		o.RetryAfter = 10 * time.Second
	}
	if o.CertCacheSize <= 0 {
		o.CertCacheSize = def.CertCacheSize
	}
	if o.MaxIdleConnsPerHost <= 0 {
		o.MaxIdleConnsPerHost = def.MaxIdleConnsPerHost
	}
	certs, err := mitm.NewCertCache(o.CA, o.CertCacheSize, o.Now)
	if err != nil {
		return nil, err
	}
	p := &Proxy{opts: o, certs: certs, tunnel: map[string]bool{}, waiters: newHoldWaiters(), alarms: alarmsOf(o.Store),
		paid: newPaidHosts(), splices: newSplices(), sellers: o.Store, log: o.Logger, metrics: o.Metrics,
		unpaid: newUnpaidTickets(o.MaxUnpaidPerSite), challenges: newChallengeMemo()}
	p.rt = goproxy.RoundTripperFunc(p.roundTrip)
	for _, h := range o.TunnelHosts {
		p.tunnel[strings.ToLower(h)] = true
	}
	rs := o.RuleSet
	if rs == nil {
		if rs, err = NewRuleSet(RuleSetConfig{Rules: o.Rules}, nil, nil); err != nil {
			return nil, err
		}
	}
	p.rs.Store(rs)
	p.tr = newUpstreamTransport(o)
	p.gp = p.newGoproxy()
	o.Metrics.watch(p)
	return p, nil
}

func newUpstreamTransport(o Options) *http.Transport {
	dial := o.DialContext
	if dial == nil {
		dial = (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	}
	return &http.Transport{
		// Never chain to HTTP(S)_PROXY from the environment: in a sidecar it points back at payguard.
		Proxy:       nil,
		DialContext: dial,
		// Upstream TLS is verified: system roots (or the configured pool), never InsecureSkipVerify.
		TLSClientConfig:       &tls.Config{RootCAs: o.UpstreamRoots, MinVersion: tls.VersionTLS12},
		ForceAttemptHTTP2:     false,
		MaxIdleConns:          4 * o.MaxIdleConnsPerHost,
		MaxIdleConnsPerHost:   o.MaxIdleConnsPerHost,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
}

func (p *Proxy) newGoproxy() *goproxy.ProxyHttpServer {
	gp := goproxy.NewProxyHttpServer()
	gp.Tr = p.tr
	gp.ConnectDial = nil // dial through Tr.DialContext; never via HTTPS_PROXY from the environment
	gp.AllowHTTP2 = false
	// goproxy reports its per-request steps only when Verbose; they become debug lines (goproxyLog), so
	// they are asked for when debug is on (--log-level debug) and cost nothing otherwise.
	gp.Verbose = p.log.Enabled(context.Background(), slog.LevelDebug)
	gp.Logger = goproxyLog{p}
	gp.NonproxyHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusBadRequest, notProxyRequest)
	})
	gp.OnRequest().HandleConnectFunc(p.handleConnect)
	gp.OnRequest().DoFunc(p.onRequest)
	gp.OnResponse().DoFunc(p.onResponse)
	return gp
}

// ServeHTTP serves the agent's proxy traffic.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) { p.gp.ServeHTTP(w, r) }

// Close drops idle upstream connections.
func (p *Proxy) Close() { p.tr.CloseIdleConnections() }

// handleConnect MITMs every CONNECT except those to tunnel_hosts.
func (p *Proxy) handleConnect(host string, ctx *goproxy.ProxyCtx) (*goproxy.ConnectAction, string) {
	if _, ok := p.authConnect(ctx); !ok { // agents.go
		return &goproxy.ConnectAction{Action: goproxy.ConnectHijack, Hijack: p.reject407}, host
	}
	if p.isTunnelHost(host) {
		return goproxy.OkConnect, host
	}
	return &goproxy.ConnectAction{Action: goproxy.ConnectMitm, TLSConfig: p.tlsConfigFor}, host
}

func (p *Proxy) isTunnelHost(hostport string) bool {
	hostport = strings.ToLower(hostport)
	if p.tunnel[hostport] {
		return true
	}
	host, _, err := net.SplitHostPort(hostport)
	return err == nil && p.tunnel[host]
}

func (p *Proxy) tlsConfigFor(hostport string, ctx *goproxy.ProxyCtx) (*tls.Config, error) {
	p.noteClient(ctx)
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.ToLower(strings.Trim(host, "[]"))
	cert, err := p.certs.Get(host)
	if err != nil {
		return nil, err
	}
	return &tls.Config{Certificates: []tls.Certificate{*cert}, MinVersion: tls.VersionTLS12,
		NextProtos: []string{"http/1.1"}}, nil
}

// day is the budget day of now (UTC, 2006-01-02). The name is formatted once per day, not per decision;
// a clock that goes back to another day is named afresh (the cache holds the last day named, whatever it is).
func (p *Proxy) day() string {
	t := p.opts.Now().UTC()
	y, m, d := t.Date()
	if c := p.today.Load(); c != nil && c.y == y && c.m == m && c.d == d {
		return c.name
	}
	c := &dayName{y: y, m: m, d: d, name: t.Format("2006-01-02")}
	p.today.Store(c)
	return c.name
}

// dayName is a UTC date and its name.
type dayName struct {
	y, d int
	m    time.Month
	name string
}
