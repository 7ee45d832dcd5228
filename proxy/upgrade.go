package proxy

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/elazarl/goproxy"

	"github.com/payguard/payguard/config"
	"github.com/payguard/payguard/index"
)

// Protocol upgrades (WebSocket and any other `Upgrade:`). After a 101 the proxy splices the agent's
// connection to the seller's as raw bytes: nothing in that stream is an HTTP request payguard can read, so
// a payment sent inside it (a frame carrying a signed authorization, or an HTTP request pipelined behind the
// upgrade) would reach the seller unjudged. What payguard can do it does: the upgrade request itself is a
// request like any other (its payment header, in any spelling, is decided before it leaves), a 101 the
// agent did not ask for, or one to a protocol other than WebSocket, is never spliced (the agent's next bytes
// are read as HTTP and decided), and by default no upgrade is allowed to a host that has answered 402 (a
// seller of paid resources) through payguard: the store keeps those hosts (store.Sellers), so restarts
// and replicas agree. Bytes inside an allowed WebSocket stream are not scanned
// for payments: docs/proxy.md's threat model says why.

// UpgradePolicy is proxy.upgrades: what payguard does with a request that asks to switch protocols.
type UpgradePolicy string

const (
	// UpgradesRefuseAfter402 (the default) refuses upgrades to any host that has answered 402 through
	// payguard (kept in the store: across restarts, on every replica); other upgrades go on, their requests
	// decided like any other.
	UpgradesRefuseAfter402 UpgradePolicy = config.UpgradesRefuseAfter402
	// UpgradesAllow lets every upgrade through (its request still decided like any other).
	UpgradesAllow UpgradePolicy = config.UpgradesAllow
	// UpgradesRefuse refuses every upgrade.
	UpgradesRefuse UpgradePolicy = config.UpgradesRefuse
)

// ParseUpgradePolicy reads proxy.upgrades; "" is the default. The values and the message for any other are
// config's (config.CheckUpgrades), stated once.
func ParseUpgradePolicy(s string) (UpgradePolicy, error) {
	if s == "" {
		return UpgradePolicy(config.DefaultProxy().Upgrades), nil
	}
	if err := config.CheckUpgrades(s); err != nil {
		return "", err
	}
	return UpgradePolicy(s), nil
}

// maxPaidHosts bounds the memory of hosts that answered 402. Once full, every host counts as one (upgrades
// are refused everywhere under refuse_after_402) rather than forgetting a seller: fail closed.
const maxPaidHosts = 1 << 16

// paidHosts remembers, in memory, the hosts that have answered 402 through this process, and those the
// store said were sellers: the store (store.Sellers) is what replicas share and restarts keep.
type paidHosts struct {
	mu    sync.Mutex
	hosts map[string]struct{}
	full  bool
}

func newPaidHosts() *paidHosts { return &paidHosts{hosts: map[string]struct{}{}} }

// add remembers host; added reports whether it is new.
func (s *paidHosts) add(host string) (added bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.hosts[host]; ok || s.full {
		return false
	}
	if len(s.hosts) >= maxPaidHosts {
		s.full = true
		return false
	}
	s.hosts[host] = struct{}{}
	return true
}

func (s *paidHosts) has(host string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.hosts[host]
	return ok || s.full
}

// upgradeHost is the host an upgrade policy is kept for: the request's host name in its one canonical
// spelling (index.CanonicalHost), without the port (a seller is one seller on every port). A seller that
// answered 402 as seller.example must not be a new host as SELLER.example., bücher.example's punycode, or
// an IPv6 literal written with other zeros: each of them reaches the same server.
func upgradeHost(req *http.Request) string {
	if req == nil || req.URL == nil {
		return ""
	}
	return index.CanonicalHost(req.URL.Hostname())
}

// isUpgradeRequest reports whether req asks to switch protocols: an Upgrade header, or "upgrade" among
// the Connection options (Go's transport and goproxy act on either).
func isUpgradeRequest(req *http.Request) bool {
	return len(req.Header.Values("Upgrade")) > 0 || hasToken(req.Header, "Connection", "upgrade")
}

// sellersTimeout bounds one question to the store about hosts that answered 402.
const sellersTimeout = 2 * time.Second

// upgradeRefusal returns why an upgrade request must be refused under the policy, or "". Under
// refuse_after_402 a host is a seller when this process saw it answer 402, or when the store remembers it
// (store.Sellers: every replica's 402s, before any restart); a store that cannot answer refuses the upgrade.
func (p *Proxy) upgradeRefusal(req *http.Request) string {
	switch p.opts.Upgrades {
	case UpgradesAllow:
		return ""
	case UpgradesRefuse:
		return "protocol upgrades are refused (proxy.upgrades: refuse): bytes after a 101 cannot be guarded"
	}
	host := upgradeHost(req)
	seller := p.paid.has(host)
	if !seller && host != "" {
		ctx, cancel := context.WithTimeout(req.Context(), sellersTimeout)
		defer cancel()
		known, err := p.sellers.IsSeller(ctx, host)
		if err != nil {
			return fmt.Sprintf("protocol upgrade to %s refused: the store cannot say whether it has answered 402 (%v)", host, err)
		}
		if seller = known; seller {
			p.learnedSeller(host)
		}
	}
	if seller {
		return fmt.Sprintf("protocol upgrade to %s refused: it has answered 402, and payments inside an upgraded "+
			"connection cannot be guarded (proxy.upgrades: refuse_after_402)", host)
	}
	return ""
}

// guardSwitch judges a response before goproxy sees it: a 101 is spliced only when the agent asked for an
// upgrade the policy still allows (a seller that answered 402 meanwhile loses it) and it switches to
// WebSocket, the one protocol the proxy relays; any other response loses
// its Upgrade header, so goproxy never takes it for a WebSocket handshake. It returns a replacement
// response, or nil to go on.
func (p *Proxy) guardSwitch(resp *http.Response, ctx *goproxy.ProxyCtx, st *reqState) *http.Response {
	if resp.StatusCode != http.StatusSwitchingProtocols {
		resp.Header.Del("Upgrade")
		return nil
	}
	why := ""
	switch {
	case !st.upgrade:
		why = "seller switched protocols on a request that did not ask to"
	case !isWebSocketSwitch(resp.Header):
		why = fmt.Sprintf("seller switched to %q: payguard relays only WebSocket upgrades (no other protocol "+
			"after a 101 is passed on, as payments inside it could not be read)", strings.Join(resp.Header.Values("Upgrade"), ", "))
	default:
		why = p.upgradeRefusal(ctx.Req)
	}
	if why == "" {
		p.trackSplice(resp, ctx.Req)
		return nil
	}
	if resp.Body != nil {
		resp.Body.Close()
	}
	out := failClosed("upgrade_refused", why)
	p.logDecision("upgrade", ctx.Req, out, st.start)
	st.local = true
	return refusal(ctx.Req, out, p.opts.RetryAfter)
}

// isWebSocketSwitch reports whether a 101's headers are a WebSocket handshake's: "upgrade" among the
// Connection options and "websocket" among the Upgrade protocols. It is the test goproxy applies before it
// splices (goproxy's isWebSocketHandshake, in both its plain and MITM paths); a 101 that fails it would not
// be relayed but left waiting on the seller's raw stream (HTTP/2 after an h2c upgrade, TLS after RFC 2817's,
// or a made-up protocol), so payguard refuses it instead. Requests inside such a protocol would carry
// payment headers payguard cannot read; the agent's bytes after the refusal are read as HTTP and decided.
func isWebSocketSwitch(h http.Header) bool {
	return hasToken(h, "Connection", "upgrade") && hasToken(h, "Upgrade", "websocket")
}

// hasToken reports whether token is one of the comma-separated values of header name (case-insensitive).
func hasToken(h http.Header, name, token string) bool {
	for _, v := range h.Values(name) {
		for _, t := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), token) {
				return true
			}
		}
	}
	return false
}

// splices are the upgraded connections open to each host. When a host answers its first 402, its open
// splices are closed under refuse_after_402: an upgrade allowed before the host showed itself a seller does
// not outlive that answer.
type splices struct {
	mu     sync.Mutex
	byHost map[string]map[*splice]struct{}
}

func newSplices() *splices { return &splices{byHost: map[string]map[*splice]struct{}{}} }

// splice is the seller's side of an upgraded connection (the 101's body, which goproxy relays raw). It
// stays an io.ReadWriter, as goproxy requires, and leaves the registry when it is closed or fails.
type splice struct {
	io.ReadWriteCloser
	host string
	reg  *splices
}

func (s *splices) add(host string, rwc io.ReadWriteCloser) *splice {
	c := &splice{ReadWriteCloser: rwc, host: host, reg: s}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.byHost[host] == nil {
		s.byHost[host] = map[*splice]struct{}{}
	}
	s.byHost[host][c] = struct{}{}
	return c
}

func (s *splices) remove(c *splice) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.byHost[c.host], c)
	if len(s.byHost[c.host]) == 0 {
		delete(s.byHost, c.host)
	}
}

// closeHost closes every open splice to host.
func (s *splices) closeHost(host string) {
	s.mu.Lock()
	open := s.byHost[host]
	delete(s.byHost, host)
	s.mu.Unlock()
	for c := range open {
		c.ReadWriteCloser.Close()
	}
}

func (c *splice) Read(p []byte) (int, error) {
	n, err := c.ReadWriteCloser.Read(p)
	if err != nil {
		c.reg.remove(c)
	}
	return n, err
}

func (c *splice) Write(p []byte) (int, error) {
	n, err := c.ReadWriteCloser.Write(p)
	if err != nil {
		c.reg.remove(c)
	}
	return n, err
}

func (c *splice) Close() error {
	c.reg.remove(c)
	return c.ReadWriteCloser.Close()
}

// sellerAnswered402 records that the request's host answered 402, in this process and in the store (once
// per host and process), and under refuse_after_402 closes the upgraded connections still open to it here.
// A store that fails to record it is logged: this process still refuses, another replica or the next start
// may not.
func (p *Proxy) sellerAnswered402(req *http.Request) {
	host := upgradeHost(req)
	if !p.learnedSeller(host) {
		return
	}
	if host != "" {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(req.Context()), sellersTimeout)
		defer cancel()
		if err := p.sellers.MarkSeller(ctx, host); err != nil {
			p.log.Warn("seller host not recorded", "host", host, "error", err.Error(),
				"hint", "other replicas and later starts may allow protocol upgrades to it (proxy.upgrades)")
		}
	}
}

// learnedSeller remembers host as a seller in this process; when it is news here, under refuse_after_402
// the upgraded connections this process still has open to it are closed (whether it answered 402 here or
// the store says it did elsewhere). It reports whether the host was news.
func (p *Proxy) learnedSeller(host string) bool {
	if !p.paid.add(host) {
		return false
	}
	if p.opts.Upgrades == UpgradesRefuseAfter402 {
		p.splices.closeHost(host)
	}
	return true
}

// trackSplice registers an allowed 101's connection so that it can be closed if its host answers 402.
func (p *Proxy) trackSplice(resp *http.Response, req *http.Request) {
	if rwc, ok := resp.Body.(io.ReadWriteCloser); ok && resp.StatusCode == http.StatusSwitchingProtocols {
		resp.Body = p.splices.add(upgradeHost(req), rwc)
	}
}
