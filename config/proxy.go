package config

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// ProxyConfig is the `proxy:` section: the forward proxy the agent sends its traffic through.
type ProxyConfig struct {
	// Listen is the proxy's address (HTTP_PROXY / HTTPS_PROXY for the agent).
	Listen string `yaml:"listen"`
	// DataDir is the old name of the top-level data_dir (Config.DataDir), read so that configurations
	// written before serve had a data dir of its own keep working: Parse moves it to Config.DataDir and
	// leaves this empty; setting both to different directories is an error. Code reads Config.DataDir.
	DataDir string `yaml:"data_dir"`
	// CACertFile and CAKeyFile are the MITM CA (PEM; ECDSA P-256 from `payguard ca init`). When both files
	// are missing at start, the proxy generates them there. Both "" means <data_dir>/ca/payguard-ca.pem and
	// <data_dir>/ca/payguard-ca-key.pem.
	CACertFile string `yaml:"ca_cert_file"`
	CAKeyFile  string `yaml:"ca_key_file"`
	// TunnelHosts are hosts whose CONNECT is passed through without inspection ("host" or "host:port").
	// Payments to them are invisible to the guard. Every other CONNECT is intercepted.
	TunnelHosts []string `yaml:"tunnel_hosts"`
	// Upgrades is what the proxy does with requests that switch protocols (WebSocket and other Upgrade:
	// requests), whose bytes after a 101 it cannot read: refuse_after_402 (default: refused to hosts that
	// have answered 402 since start), allow, or refuse. Every upgrade request is still decided like any other.
	Upgrades string `yaml:"upgrades"`
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

	// TicketTTLMax bounds how long an allowed 402's ticket, and the budget it reserves, waits for the paid
	// retry: the challenge's maxTimeoutSeconds (at least 1m) up to this. A ticket that expires unused gives
	// its reservation back (store.TicketReleaseGrace later); a payment that arrives after it is decided
	// afresh.
	TicketTTLMax Duration `yaml:"ticket_ttl_max"`
	// MaxUnpaidPerSite bounds the tickets of allowed 402s outstanding (unpaid, not yet released) per seller
	// site (registrable domain); past it an allowed 402 is refused (unpaid_tickets_per_site), so a seller or
	// an agent loop that never pays cannot fill the store.
	MaxUnpaidPerSite int `yaml:"max_unpaid_per_site"`
}

// The values of proxy.upgrades, stated here once: config validates them and the proxy takes them as its
// UpgradePolicy (proxy/upgrade.go).
const (
	UpgradesRefuseAfter402 = "refuse_after_402"
	UpgradesAllow          = "allow"
	UpgradesRefuse         = "refuse"
)

// CheckUpgrades says whether s is a value of proxy.upgrades.
func CheckUpgrades(s string) error {
	switch s {
	case UpgradesRefuseAfter402, UpgradesAllow, UpgradesRefuse:
		return nil
	}
	return fmt.Errorf("proxy.upgrades: %q is not one of %s, %s, %s", s, UpgradesRefuseAfter402, UpgradesAllow, UpgradesRefuse)
}

// DefaultProxy is the proxy: section's defaults, stated once: the embedded default file says the same, and
// the proxy fills an Option left zero from here (proxy.New).
func DefaultProxy() ProxyConfig { return defaultProxy() }

func defaultProxy() ProxyConfig {
	return ProxyConfig{
		Listen:              "127.0.0.1:8402",
		CACertFile:          "./payguard-data/ca/payguard-ca.pem",
		CAKeyFile:           "./payguard-data/ca/payguard-ca-key.pem",
		TunnelHosts:         []string{},
		Upgrades:            UpgradesRefuseAfter402,
		UpstreamCAFiles:     []string{},
		HoldWait:            Duration(30 * time.Second),
		HoldTTL:             Duration(15 * time.Minute),
		CertCacheSize:       1024,
		MaxIdleConnsPerHost: 256,
		Budget:              "default",
		TicketTTLMax:        Duration(5 * time.Minute),
		MaxUnpaidPerSite:    1000,
	}
}

func (c *ProxyConfig) validate() error {
	var errs []error
	if err := validListen("proxy.listen", c.Listen); err != nil {
		errs = append(errs, err)
	}
	if (c.CACertFile == "") != (c.CAKeyFile == "") {
		errs = append(errs, fmt.Errorf("proxy.ca_cert_file and proxy.ca_key_file must be set together"))
	}
	for _, h := range c.TunnelHosts {
		if strings.TrimSpace(h) == "" || strings.ContainsAny(h, "/ *") {
			errs = append(errs, fmt.Errorf("proxy.tunnel_hosts: %q is not a host or host:port", h))
		}
	}
	if err := CheckUpgrades(c.Upgrades); err != nil {
		errs = append(errs, err)
	}
	if c.HoldWait < 0 || c.HoldWait > Duration(10*time.Minute) {
		errs = append(errs, fmt.Errorf("proxy.hold_wait must be between 0s and 10m, got %s", c.HoldWait))
	}
	if c.HoldTTL < Duration(time.Minute) {
		errs = append(errs, fmt.Errorf("proxy.hold_ttl must be at least 1m, got %s", c.HoldTTL))
	}
	if c.CertCacheSize < 1 || c.CertCacheSize > 1_000_000 {
		errs = append(errs, fmt.Errorf("proxy.cert_cache_size must be between 1 and 1000000, got %d", c.CertCacheSize))
	}
	if c.MaxIdleConnsPerHost < 1 || c.MaxIdleConnsPerHost > 100_000 {
		errs = append(errs, fmt.Errorf("proxy.max_idle_conns_per_host must be between 1 and 100000, got %d", c.MaxIdleConnsPerHost))
	}
	if c.TicketTTLMax < Duration(time.Minute) || c.TicketTTLMax > Duration(time.Hour) {
		errs = append(errs, fmt.Errorf("proxy.ticket_ttl_max must be between 1m and 1h, got %s", c.TicketTTLMax))
	}
	if c.MaxUnpaidPerSite < 1 || c.MaxUnpaidPerSite > 1_000_000 {
		errs = append(errs, fmt.Errorf("proxy.max_unpaid_per_site must be between 1 and 1000000, got %d", c.MaxUnpaidPerSite))
	}
	if c.Budget == "" || len(c.Budget) > 128 {
		errs = append(errs, fmt.Errorf("proxy.budget must be 1 to 128 characters"))
	}
	return errors.Join(errs...)
}

// AdminConfig is the `admin:` section: the approval API, health and metrics listener.
type AdminConfig struct {
	// Listen is the admin API address. Keep it on loopback or a private network.
	Listen string `yaml:"listen"`
	// TokenFile holds the bearer token for the approval API. The environment variable
	// PAYGUARD_ADMIN_TOKEN takes precedence; with neither, a token is generated into
	// <data_dir>/admin-token (mode 0600) at start.
	TokenFile string `yaml:"token_file"`
	// Notify sends hold events to webhooks (config/notify.go).
	Notify NotifyConfig `yaml:"notify"`
	// Hosts are the host names the admin listener answers to besides "localhost" and IP addresses (the
	// host of notify.console_url is added): any other Host gets 421, which keeps a DNS-rebinding page in an
	// approver's browser out (docs/approvals.md). List the names approvers and the CLI use to reach it.
	Hosts []string `yaml:"hosts"`
}

// AllowedHosts is Hosts plus the host of notify.console_url.
func (c *AdminConfig) AllowedHosts() []string {
	out := append([]string(nil), c.Hosts...)
	if u, err := url.Parse(c.Notify.ConsoleURL); err == nil && c.Notify.ConsoleURL != "" && u.Hostname() != "" {
		out = append(out, u.Hostname())
	}
	return out
}

func defaultAdmin() AdminConfig {
	return AdminConfig{Listen: "127.0.0.1:8403", Notify: defaultNotify()}
}

func (c *AdminConfig) validate() error {
	var errs []error
	if err := c.Notify.validate(); err != nil {
		errs = append(errs, err)
	}
	if len(c.Hosts) > 100 {
		errs = append(errs, fmt.Errorf("admin.hosts: at most 100 names, got %d", len(c.Hosts)))
	}
	for _, h := range c.Hosts {
		if h == "" || len(h) > 253 || strings.ContainsAny(h, " /:@?#[]") {
			errs = append(errs, fmt.Errorf("admin.hosts: %q is not a host name (no port, scheme or path)", h))
		}
	}
	errs = append(errs, validListen("admin.listen", c.Listen))
	return errors.Join(errs...)
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

// UnmarshalYAML reads Go duration text. Its errors name the line, which config.Parse turns into the key.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	// A *yaml.TypeError lets the decoder go on to the other keys, so every bad value is reported at once.
	if n.Kind != yaml.ScalarNode {
		return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: want a duration such as 30s or 15m", n.Line)}}
	}
	v, err := time.ParseDuration(n.Value)
	if err != nil {
		return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: %q is not a duration such as 30s or 15m", n.Line, n.Value)}}
	}
	*d = Duration(v)
	return nil
}

// MarshalYAML writes Go duration text.
func (d Duration) MarshalYAML() (any, error) { return d.String(), nil }
