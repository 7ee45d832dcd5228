package proxy

import (
	"crypto/x509"
	"fmt"
	"os"
	"time"

	"github.com/payguard/payguard/config"
)

// OptionsFromConfig is the proxy's options as the configuration sets them: the proxy: section (budget,
// tunnel hosts, upgrades, upstream roots, hold and ticket bounds, caches), the rules and the Index's retention. The caller adds what a running process brings: the engine, the
// store, the CA, the logger and the rest. Its defaults and the values it accepts are config's.
func OptionsFromConfig(cfg *config.Config) (Options, error) {
	c := cfg.Proxy
	upgrades, err := ParseUpgradePolicy(c.Upgrades)
	if err != nil {
		return Options{}, err
	}
	roots, err := upstreamRoots(c.UpstreamCAFiles)
	if err != nil {
		return Options{}, err
	}
	return Options{
		Rules: cfg.Rules, Budget: c.Budget, TunnelHosts: c.TunnelHosts, Upgrades: upgrades, UpstreamRoots: roots,
		HoldWait: time.Duration(c.HoldWait), HoldTTL: time.Duration(c.HoldTTL), TicketTTLMax: time.Duration(c.TicketTTLMax),
		MaxUnpaidPerSite: c.MaxUnpaidPerSite, CertCacheSize: c.CertCacheSize, MaxIdleConnsPerHost: c.MaxIdleConnsPerHost,
		IndexMaxAge: time.Duration(cfg.Index.Retention),
	}, nil
}

// upstreamRoots is the system pool plus the configured extra roots (proxy.upstream_ca_files).
func upstreamRoots(files []string) (*x509.CertPool, error) {
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		pool = x509.NewCertPool()
	}
	for _, f := range files {
		pem, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("proxy.upstream_ca_files: %w", err)
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("proxy.upstream_ca_files: %s holds no PEM certificate", f)
		}
	}
	return pool, nil
}
