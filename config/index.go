package config

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"time"
)

// IndexConfig is the `index:` section: the Endpoint Index the three Index rules (max_price_multiple,
// require_live, hold_on_payto_change) decide with. Observations live in the store, so a fleet on Redis
// shares them.
type IndexConfig struct {
	// Observe makes the proxy record every 402 it decodes and every paid response it forwards (default on:
	// with it off the Index rules have no evidence from the proxy, and say nothing).
	Observe bool `yaml:"observe"`
	// Queue bounds the observations waiting to be written; beyond it they are dropped and counted
	// (payguard_index_observations_dropped_total), never waited for.
	Queue int `yaml:"queue"`
	// Retention is how long observations are kept and used as evidence. At least SPEC's seven-day payee
	// change window.
	Retention Duration `yaml:"retention"`
	// MaxPerEndpoint bounds the observations kept per endpoint URL (the oldest go first).
	MaxPerEndpoint int `yaml:"max_per_endpoint"`
	// Coalesce: an observation identical to the last one of its source and method written for its endpoint
	// (same status, offers and payee) within this interval is not written again, so a busy endpoint's
	// history still spans the retention within MaxPerEndpoint. Failed probes, and the first observation
	// after a failure, are always written. 0 writes every one.
	Coalesce Duration `yaml:"coalesce"`
	// Probe is the opt-in prober (off by default).
	Probe ProbeConfig `yaml:"probe"`
}

// ProbeConfig is `index.probe`: unpaid requests to public endpoints, recorded as observations (require_live
// holds after three consecutive failures). Off by default.
type ProbeConfig struct {
	Enabled bool `yaml:"enabled"`
	// Endpoints are probed with GET (absolute http(s) URLs).
	Endpoints []string `yaml:"endpoints"`
	// DiscoveryURLs are facilitator discovery lists (x402 bazaar, GET /discovery/resources); every http
	// resource they publish is probed too.
	DiscoveryURLs []string `yaml:"discovery_urls"`
	// Interval between rounds; PerHostInterval the least time between two requests to one host.
	Interval        Duration `yaml:"interval"`
	PerHostInterval Duration `yaml:"per_host_interval"`
	// Timeout bounds one probe; MaxBodyBytes the body read from it.
	Timeout      Duration `yaml:"timeout"`
	MaxBodyBytes int64    `yaml:"max_body_bytes"`
	// MaxEndpoints bounds the endpoints one round probes (configured plus discovered).
	MaxEndpoints int `yaml:"max_endpoints"`
	// AllowPrivate lifts the egress guard for these CIDRs only (e.g. an internal seller). Loopback,
	// private, link-local, metadata and other special addresses are refused unless listed here.
	AllowPrivate []string `yaml:"allow_private"`
}

func defaultIndex() IndexConfig {
	return IndexConfig{
		Observe:        true,
		Queue:          4096,
		Retention:      Duration(30 * 24 * time.Hour),
		MaxPerEndpoint: 256,
		Coalesce:       Duration(time.Hour),
		Probe: ProbeConfig{
			Endpoints: []string{}, DiscoveryURLs: []string{}, AllowPrivate: []string{},
			Interval: Duration(15 * time.Minute), PerHostInterval: Duration(10 * time.Second),
			Timeout: Duration(5 * time.Second), MaxBodyBytes: 64 << 10, MaxEndpoints: 500,
		},
	}
}

func (c *IndexConfig) validate() error {
	var errs []error
	if c.Queue < 1 || c.Queue > 1<<20 {
		errs = append(errs, fmt.Errorf("index.queue must be between 1 and 1048576, got %d", c.Queue))
	}
	if time.Duration(c.Retention) < 7*24*time.Hour {
		errs = append(errs, fmt.Errorf("index.retention must be at least 168h (SPEC's seven-day payee change window), got %s", c.Retention))
	}
	if c.MaxPerEndpoint < 1 || c.MaxPerEndpoint > 100000 {
		errs = append(errs, fmt.Errorf("index.max_per_endpoint must be between 1 and 100000, got %d", c.MaxPerEndpoint))
	}
	if c.Coalesce < 0 {
		errs = append(errs, fmt.Errorf("index.coalesce must not be negative"))
	}
	p := &c.Probe
	for _, raw := range append(append([]string{}, p.Endpoints...), p.DiscoveryURLs...) {
		u, err := url.Parse(raw)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			errs = append(errs, fmt.Errorf("index.probe: %q is not an absolute http(s) URL", raw))
		}
	}
	for _, cidr := range p.AllowPrivate {
		if _, err := netip.ParsePrefix(cidr); err != nil {
			errs = append(errs, fmt.Errorf("index.probe.allow_private: %q is not a CIDR: %v", cidr, err))
		}
	}
	if p.Enabled {
		if len(p.Endpoints) == 0 && len(p.DiscoveryURLs) == 0 {
			errs = append(errs, fmt.Errorf("index.probe is enabled with no endpoints and no discovery_urls: it would probe nothing"))
		}
		if p.Interval <= 0 || p.PerHostInterval < 0 || p.Timeout <= 0 || p.MaxBodyBytes <= 0 || p.MaxEndpoints <= 0 {
			errs = append(errs, fmt.Errorf("index.probe: interval, timeout, max_body_bytes and max_endpoints must be positive"))
		}
	}
	return errors.Join(errs...)
}
