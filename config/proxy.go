package config

import (
	"fmt"
	"net"
	"strings"
	"time"
)

// ProxyConfig is the `proxy:` section: the forward proxy the agent sends its traffic through.
type ProxyConfig struct {
	// Listen is the proxy's address (HTTP_PROXY / HTTPS_PROXY for the agent).
	Listen string `yaml:"listen"`
	// DataDir holds state the proxy creates on first run: the MITM CA (when CACertFile and CAKeyFile are
	// left at their defaults, or both set to "", and do not exist yet) and the generated admin token. The
	// store path, receipt keys and sanctions cache have their own keys (store.path, keys.receipt_key_file,
	// screening.sanctions.cache_dir): set them too when moving the data dir.
	DataDir string `yaml:"data_dir"`
	// CACertFile and CAKeyFile are the MITM CA (PEM; ECDSA P-256 from `payguard ca init`). When both files
	// are missing at start, the proxy generates them there. Both "" means <data_dir>/ca/payguard-ca.pem and
	// <data_dir>/ca/payguard-ca-key.pem.
	CACertFile string `yaml:"ca_cert_file"`
	CAKeyFile  string `yaml:"ca_key_file"`
	// TunnelHosts are hosts whose CONNECT is passed through without inspection ("host" or "host:port").
	// Payments to them are invisible to the guard. Every other CONNECT is intercepted.
	TunnelHosts []string `yaml:"tunnel_hosts"`
	// UpstreamCAFiles are extra PEM roots trusted for upstream TLS, on top of the system roots.
	UpstreamCAFiles []string `yaml:"upstream_ca_files"`
	// HoldWait is how long a held 402 waits for a person before the agent gets 403 with the hold id.
	HoldWait Duration `yaml:"hold_wait"`
	// HoldTTL is how long a hold stays approvable, and how long an approved hold waits for its 402 to
	// come back.
	HoldTTL Duration `yaml:"hold_ttl"`
	// CertCacheSize bounds the number of MITM leaf certificates kept in memory.
	CertCacheSize int `yaml:"cert_cache_size"`
	// MaxIdleConnsPerHost is the upstream transport's idle pool per host (Go's default of 2 churns
	// connections under load).
	MaxIdleConnsPerHost int `yaml:"max_idle_conns_per_host"`
	// Budget names the daily budget in the ledger; proxies sharing a store and a budget share one cap.
	Budget string `yaml:"budget"`
}

func defaultProxy() ProxyConfig {
	return ProxyConfig{
		Listen:              "127.0.0.1:8402",
		DataDir:             "./payguard-data",
		CACertFile:          "./payguard-data/ca/payguard-ca.pem",
		CAKeyFile:           "./payguard-data/ca/payguard-ca-key.pem",
		TunnelHosts:         []string{},
		UpstreamCAFiles:     []string{},
		HoldWait:            Duration(30 * time.Second),
		HoldTTL:             Duration(15 * time.Minute),
		CertCacheSize:       1024,
		MaxIdleConnsPerHost: 256,
		Budget:              "default",
	}
}

func (c *ProxyConfig) validate() error {
	if err := validListen("proxy.listen", c.Listen); err != nil {
		return err
	}
	if c.DataDir == "" {
		return fmt.Errorf("proxy.data_dir must not be empty")
	}
	if (c.CACertFile == "") != (c.CAKeyFile == "") {
		return fmt.Errorf("proxy.ca_cert_file and proxy.ca_key_file must be set together")
	}
	for _, h := range c.TunnelHosts {
		if strings.TrimSpace(h) == "" || strings.ContainsAny(h, "/ *") {
			return fmt.Errorf("proxy.tunnel_hosts: %q is not a host or host:port", h)
		}
	}
	if c.HoldWait < 0 || c.HoldWait > Duration(10*time.Minute) {
		return fmt.Errorf("proxy.hold_wait must be between 0s and 10m, got %s", c.HoldWait)
	}
	if c.HoldTTL < Duration(time.Minute) {
		return fmt.Errorf("proxy.hold_ttl must be at least 1m, got %s", c.HoldTTL)
	}
	if c.CertCacheSize < 1 || c.CertCacheSize > 1_000_000 {
		return fmt.Errorf("proxy.cert_cache_size must be between 1 and 1000000, got %d", c.CertCacheSize)
	}
	if c.MaxIdleConnsPerHost < 1 || c.MaxIdleConnsPerHost > 100_000 {
		return fmt.Errorf("proxy.max_idle_conns_per_host must be between 1 and 100000, got %d", c.MaxIdleConnsPerHost)
	}
	if c.Budget == "" || len(c.Budget) > 128 {
		return fmt.Errorf("proxy.budget must be 1 to 128 characters")
	}
	return nil
}

// AdminConfig is the `admin:` section: the approval API, health and metrics listener.
type AdminConfig struct {
	// Listen is the admin API address. Keep it on loopback or a private network.
	Listen string `yaml:"listen"`
	// TokenFile holds the bearer token for the approval API. The environment variable
	// PAYGUARD_ADMIN_TOKEN takes precedence; with neither, a token is generated into
	// <proxy.data_dir>/admin-token (mode 0600) at start.
	TokenFile string `yaml:"token_file"`
	// Notify sends hold events to webhooks (config/notify.go).
	Notify NotifyConfig `yaml:"notify"`
}

func defaultAdmin() AdminConfig {
	return AdminConfig{Listen: "127.0.0.1:8403", Notify: defaultNotify()}
}

func (c *AdminConfig) validate() error {
	if err := c.Notify.validate(); err != nil {
		return err
	}
	return validListen("admin.listen", c.Listen)
}

func validListen(name, addr string) error {
	if _, port, err := net.SplitHostPort(addr); err != nil || port == "" {
		return fmt.Errorf("%s: %q is not host:port", name, addr)
	}
	return nil
}

// Duration is a time.Duration written in YAML as Go duration text ("30s", "15m").
type Duration time.Duration

// String formats the duration the way it is written in YAML.
func (d Duration) String() string { return time.Duration(d).String() }

// UnmarshalYAML reads Go duration text.
func (d *Duration) UnmarshalYAML(unmarshal func(any) error) error {
	var s string
	if err := unmarshal(&s); err != nil {
		return fmt.Errorf("duration: %w", err)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("duration %q: %w", s, err)
	}
	*d = Duration(v)
	return nil
}

// MarshalYAML writes Go duration text.
func (d Duration) MarshalYAML() (any, error) { return d.String(), nil }
