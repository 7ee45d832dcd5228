package config

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/payguard/payguard/internal/evmaddr"
)

// ServerConfig is the `server:` section: `payguard serve`, the public pay-per-call screening API.
type ServerConfig struct {
	// Listen is the API's address. The default, 127.0.0.1:8080, keeps a fresh install off the network;
	// a deployment behind a load balancer sets ":8080" (or another port) and TrustedProxies.
	Listen string `yaml:"listen"`
	// BaseURL is the public origin the service is reached at (scheme://host[:port], no path). Every
	// absolute URL in challenges, offers and discovery documents is built from it.
	BaseURL string `yaml:"base_url"`
	// Contact is the operator's contact, published in /.well-known/security.txt, /terms and /privacy (a
	// mailto: or https: URI). `payguard serve` refuses to start without it: no default, so the service never
	// names an address that is not its operator's.
	Contact string `yaml:"contact"`
	// TermsFile and PrivacyFile, when set, are served at /terms and /privacy (as plain text) instead of the
	// built-in texts, which describe the service as configured: the operator's own terms.
	TermsFile   string `yaml:"terms_file"`
	PrivacyFile string `yaml:"privacy_file"`
	// TrustedProxies are the CIDRs of reverse proxies whose X-Forwarded-For is believed. The client is
	// the right-most address in X-Forwarded-For that is not itself trusted; with no trusted proxies the
	// socket peer is the client.
	TrustedProxies []string `yaml:"trusted_proxies"`
	// TrialLimit is the number of free calls per client IP per UTC day (SPEC §8.4: 3).
	TrialLimit int `yaml:"trial_limit"`
	// TrialRetention is how long a trial counter is kept (SPEC §8.4: 48h).
	TrialRetention Duration `yaml:"trial_retention"`
	// IndexFreshness is how old the endpoint index may be before /v1/endpoint answers 503
	// index_unavailable (never charging for stale data).
	IndexFreshness Duration `yaml:"index_freshness"`
	// MetricsListen, when set, serves Prometheus metrics (payguard_server_*, the sanctions refresher's) at
	// /metrics on this separate address; keep it on loopback or a private network. Empty: no metrics listener.
	MetricsListen string `yaml:"metrics_listen"`
	// ShutdownGrace is how long in-flight requests get to finish on SIGINT/SIGTERM.
	ShutdownGrace Duration `yaml:"shutdown_grace"`
	// Fees are the x402 payment terms and the facilitator.
	Fees FeesConfig `yaml:"fees"`
}

// FeesConfig is `server.fees`: what the service is paid in, to whom, and who verifies and settles.
type FeesConfig struct {
	// Network is the CAIP-2 network fees are paid on (eip155:8453 Base; eip155:84532 Base Sepolia for tests).
	Network string `yaml:"network"`
	// Asset is the token contract. Empty means the known USDC contract on Network.
	Asset string `yaml:"asset"`
	// AssetName and AssetVersion are the token's EIP-712 domain (extra.name, extra.version). Empty means the
	// known USDC values on Network ("USD Coin"/"2" on Base, "USDC"/"2" on Base Sepolia).
	AssetName    string `yaml:"asset_name"`
	AssetVersion string `yaml:"asset_version"`
	// PayTo is the service's public wallet. It must be set for `payguard serve` to start.
	PayTo string `yaml:"pay_to"`
	// MaxTimeoutSeconds is the challenge's maxTimeoutSeconds (and the offer's validity).
	MaxTimeoutSeconds int64 `yaml:"max_timeout_seconds"`
	// FacilitatorURL is the x402 facilitator's base URL (POST /verify, POST /settle, GET /supported). Empty:
	// the public https://x402.org/facilitator on a testnet it serves (TestnetFacilitatorNetworks); on any
	// other network (Base mainnet included) there is no default, and `payguard serve` refuses to start
	// until one that settles there is set (Facilitator).
	// It is published (/.well-known/x402, /privacy, /status) and logged, so it must not carry credentials
	// (user:password@ is refused): those go in the facilitator auth header below.
	FacilitatorURL string `yaml:"facilitator_url"`
	// FacilitatorAuthHeader names the header that carries the facilitator's credentials on every request to
	// it (default Authorization). Its value is read from FacilitatorAuthHeaderFile or, else, the environment
	// variable FacilitatorAuthHeaderEnv (at most one; none: no header), never from this file, and is never
	// published, logged or put in an error.
	FacilitatorAuthHeader     string `yaml:"facilitator_auth_header"`
	FacilitatorAuthHeaderFile string `yaml:"facilitator_auth_header_file"`
	FacilitatorAuthHeaderEnv  string `yaml:"facilitator_auth_header_env"`
	// VerifyTimeout bounds /verify and /supported calls.
	VerifyTimeout Duration `yaml:"verify_timeout"`
	// SettleTimeout bounds a /settle call. When it passes after the request was sent the outcome is unknown
	// (settlement_outcome_unknown) and is never retried.
	SettleTimeout Duration `yaml:"settle_timeout"`
}

// DefaultServerListen is the API's default listen address.
const DefaultServerListen = "127.0.0.1:8080"

func defaultServer() ServerConfig {
	return ServerConfig{
		Listen:         DefaultServerListen,
		BaseURL:        "http://127.0.0.1:8080",
		TrustedProxies: []string{},
		TrialLimit:     3,
		TrialRetention: Duration(48 * time.Hour),
		IndexFreshness: Duration(24 * time.Hour),
		ShutdownGrace:  Duration(15 * time.Second),
		Fees: FeesConfig{
			Network:               "eip155:8453",
			MaxTimeoutSeconds:     60,
			FacilitatorAuthHeader: "Authorization",
			VerifyTimeout:         Duration(10 * time.Second),
			SettleTimeout:         Duration(30 * time.Second),
		},
	}
}

func (c *ServerConfig) validate() error {
	var errs []error
	if err := validListen("server.listen", c.Listen); err != nil {
		errs = append(errs, err)
	}
	if c.MetricsListen != "" {
		if err := validListen("server.metrics_listen", c.MetricsListen); err != nil {
			errs = append(errs, err)
		}
	}
	if err := validOrigin("server.base_url", c.BaseURL); err != nil {
		errs = append(errs, err)
	}
	if c.Contact != "" && !strings.HasPrefix(c.Contact, "mailto:") && !strings.HasPrefix(c.Contact, "https://") {
		errs = append(errs, fmt.Errorf("server.contact must be a mailto: or https: URI, got %q", c.Contact))
	}
	if _, err := c.TrustedProxyPrefixes(); err != nil {
		errs = append(errs, err)
	}
	if c.TrialLimit < 0 || c.TrialLimit > 1000 {
		errs = append(errs, fmt.Errorf("server.trial_limit must be between 0 and 1000, got %d", c.TrialLimit))
	}
	if c.TrialRetention < Duration(24*time.Hour) {
		errs = append(errs, fmt.Errorf("server.trial_retention must be at least 24h (a UTC day), got %s", c.TrialRetention))
	}
	if c.IndexFreshness <= 0 {
		errs = append(errs, fmt.Errorf("server.index_freshness must be positive, got %s", c.IndexFreshness))
	}
	if c.ShutdownGrace < 0 || c.ShutdownGrace > Duration(10*time.Minute) {
		errs = append(errs, fmt.Errorf("server.shutdown_grace must be between 0s and 10m, got %s", c.ShutdownGrace))
	}
	errs = append(errs, c.Fees.validate())
	return errors.Join(errs...)
}

func (c *FeesConfig) validate() error {
	var errs []error
	if !strings.HasPrefix(c.Network, "eip155:") || len(c.Network) <= len("eip155:") {
		errs = append(errs, fmt.Errorf("server.fees.network must be an EVM CAIP-2 id (eip155:<chain>), got %q", c.Network))
	}
	if c.Asset != "" && !evmaddr.Is(c.Asset) {
		errs = append(errs, fmt.Errorf("server.fees.asset must be a 0x EVM address, got %q", c.Asset))
	}
	if c.PayTo != "" && !evmaddr.Is(c.PayTo) {
		errs = append(errs, fmt.Errorf("server.fees.pay_to must be a 0x EVM address, got %q", c.PayTo))
	}
	if c.MaxTimeoutSeconds < 10 || c.MaxTimeoutSeconds > 3600 {
		errs = append(errs, fmt.Errorf("server.fees.max_timeout_seconds must be between 10 and 3600, got %d", c.MaxTimeoutSeconds))
	}
	// The URL is published and logged; an error about it names it only in redacted form (a URL that does not
	// parse is not repeated at all: it may hold a password).
	if u, err := url.Parse(c.FacilitatorURL); c.FacilitatorURL == "" {
		// empty: the default facilitator of the network (Facilitator)
	} else if err != nil {
		errs = append(errs, fmt.Errorf("server.fees.facilitator_url is not a URL"))
	} else if u.User != nil {
		errs = append(errs, fmt.Errorf("server.fees.facilitator_url must not carry credentials (user:password@ is published at "+
			"/.well-known/x402 and /privacy): give them as a header with server.fees.facilitator_auth_header_file or _env"))
	} else if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
		errs = append(errs, fmt.Errorf("server.fees.facilitator_url must be an http(s) URL without query or fragment, got %q", u.Redacted()))
	}
	if c.FacilitatorAuthHeaderFile != "" && c.FacilitatorAuthHeaderEnv != "" {
		errs = append(errs, fmt.Errorf("server.fees: set at most one of facilitator_auth_header_file and facilitator_auth_header_env"))
	}
	if !validHeaderName(c.FacilitatorAuthHeader) {
		errs = append(errs, fmt.Errorf("server.fees.facilitator_auth_header must be an HTTP header name, got %q", c.FacilitatorAuthHeader))
	}
	if c.VerifyTimeout <= 0 || c.SettleTimeout <= 0 {
		errs = append(errs, fmt.Errorf("server.fees.verify_timeout and settle_timeout must be positive"))
	}
	return errors.Join(errs...)
}

// FacilitatorAuth returns the facilitator credentials header (name and value) from its file or environment
// variable; ok is false when none is configured. A configured source that is missing or empty is an error,
// so credentials that were asked for are never silently left out; a value with a line break is refused
// (header injection). Errors name the source, never the value.
func (c *FeesConfig) FacilitatorAuth() (name, value string, ok bool, err error) {
	if c.FacilitatorAuthHeaderFile == "" && c.FacilitatorAuthHeaderEnv == "" {
		return "", "", false, nil
	}
	value, err = fromFileOrEnv("server.fees.facilitator_auth_header", c.FacilitatorAuthHeaderFile, c.FacilitatorAuthHeaderEnv)
	if err != nil {
		return "", "", false, err
	}
	if strings.ContainsAny(value, "\r\n\x00") {
		return "", "", false, fmt.Errorf("server.fees.facilitator_auth_header: the value holds a line break or NUL")
	}
	return c.FacilitatorAuthHeader, value, true, nil
}

// validHeaderName reports whether s is an RFC 9110 field name (a token).
func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}

// TrustedProxyPrefixes parses TrustedProxies ("10.0.0.0/8", or a single address meaning /32 or /128).
func (c *ServerConfig) TrustedProxyPrefixes() ([]netip.Prefix, error) {
	out := make([]netip.Prefix, 0, len(c.TrustedProxies))
	for _, s := range c.TrustedProxies {
		if p, err := netip.ParsePrefix(s); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(s)
		if err != nil {
			return nil, fmt.Errorf("server.trusted_proxies: %q is neither a CIDR nor an IP address", s)
		}
		out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
	}
	return out, nil
}

// validOrigin accepts an absolute http(s) URL with a host and no path beyond "/", query or fragment.
func validOrigin(name, s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" ||
		(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return fmt.Errorf("%s must be an origin like https://api.example.com, got %q", name, s)
	}
	return nil
}
