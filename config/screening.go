package config

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"time"
)

// ScreeningConfig is the `screening:` section: the sanctions list and the merchant domain lookups behind
// the payee check and the preflight.
type ScreeningConfig struct {
	Sanctions SanctionsConfig `yaml:"sanctions"`
	Domain    DomainConfig    `yaml:"domain"`
}

// SanctionsConfig is `screening.sanctions`: where the OFAC SDN list comes from and where it is kept.
type SanctionsConfig struct {
	// Enabled turns sanctions screening on. Off, every check that asks about a name or address reports
	// sanctions "unknown" (never "clear").
	Enabled bool `yaml:"enabled"`
	// Sources are the OFAC publications: http(s) URLs, local files (plain paths or file:// URLs), each named
	// by its OFAC file name (sdn.csv, alt.csv, add.csv, sdn_comments.csv, sdn.xml), or local directories
	// standing for the OFAC files in them (air-gapped sites). Each refresh copies them into CacheDir;
	// downloads are conditional (ETag / If-Modified-Since), local files are re-read only when changed.
	Sources []string `yaml:"sources"`
	// RefreshInterval is how often the sources are fetched again (SPEC §10: daily).
	RefreshInterval Duration `yaml:"refresh_interval"`
	// CacheDir keeps the last good download, so a restart has a list before the first refresh and
	// `payguard check` can screen without a network.
	CacheDir string `yaml:"cache_dir"`
	// SeedDir is a list shipped with payguard (the container image's snapshot, /usr/share/payguard/sanctions):
	// served at start while CacheDir holds no list, so a new pod is ready at once, stating the snapshot's
	// age in data_as_of, and replaced by the first good refresh. Read only. Empty: none.
	SeedDir string `yaml:"seed_dir"`
}

// DomainConfig is `screening.domain`: RDAP registration age and DNS lookups for merchant domains.
type DomainConfig struct {
	// Enabled turns the network lookups on. Off (air-gapped sites, tests), domain age and DNS are
	// reported unknown; the domain is still normalized and checked for validity.
	Enabled bool `yaml:"enabled"`
	// RDAPBaseURL, when set, sends every RDAP query to this server instead of the registry named by the
	// IANA bootstrap (private deployments, tests). Empty: the bootstrap decides.
	RDAPBaseURL string `yaml:"rdap_base_url"`
	// BootstrapURL is where the IANA RDAP DNS bootstrap file is refreshed from. A copy is built in and is
	// kept whenever a refresh fails.
	BootstrapURL string `yaml:"bootstrap_url"`
	// BootstrapRefresh is how often the bootstrap file is refreshed.
	BootstrapRefresh Duration `yaml:"bootstrap_refresh"`
	// Resolver is the recursive DNS resolver, "ip:port". Empty: the first nameserver in /etc/resolv.conf.
	Resolver string `yaml:"resolver"`
	// RDAPTimeout and DNSTimeout bound one lookup each; a lookup that runs out reports the fact unknown.
	RDAPTimeout Duration `yaml:"rdap_timeout"`
	DNSTimeout  Duration `yaml:"dns_timeout"`
	// PositiveTTL keeps answers that found something (a registration date, A or MX records);
	// NegativeTTL keeps the rest (not registered, NXDOMAIN, no records, failures).
	PositiveTTL Duration `yaml:"positive_ttl"`
	NegativeTTL Duration `yaml:"negative_ttl"`
	// CacheSize bounds each lookup cache, in entries.
	CacheSize int `yaml:"cache_size"`
	// NewDomainDays is the payee check's new_domain threshold: a known age below it is flagged.
	NewDomainDays int `yaml:"new_domain_days"`
}

// DefaultSanctionsSources are OFAC's Sanctions List Service exports of the SDN list in the legacy CSV
// format: entries, aliases, addresses and the remarks spill-over.
var DefaultSanctionsSources = []string{
	"https://sanctionslistservice.ofac.treas.gov/api/PublicationPreview/exports/SDN.CSV",
	"https://sanctionslistservice.ofac.treas.gov/api/PublicationPreview/exports/ALT.CSV",
	"https://sanctionslistservice.ofac.treas.gov/api/PublicationPreview/exports/ADD.CSV",
	"https://sanctionslistservice.ofac.treas.gov/api/PublicationPreview/exports/SDN_COMMENTS.CSV",
}

func defaultScreening() ScreeningConfig {
	return ScreeningConfig{
		Sanctions: SanctionsConfig{
			Enabled:         true,
			Sources:         append([]string(nil), DefaultSanctionsSources...),
			RefreshInterval: Duration(24 * time.Hour),
			CacheDir:        "./payguard-data/sanctions",
		},
		Domain: DomainConfig{
			Enabled:          true,
			BootstrapURL:     "https://data.iana.org/rdap/dns.json",
			BootstrapRefresh: Duration(24 * time.Hour),
			RDAPTimeout:      Duration(2 * time.Second),
			DNSTimeout:       Duration(time.Second),
			PositiveTTL:      Duration(6 * time.Hour),
			NegativeTTL:      Duration(time.Minute),
			CacheSize:        10000,
			NewDomainDays:    30,
		},
	}
}

func (c *ScreeningConfig) validate() error {
	var errs []error
	if err := c.Sanctions.validate(); err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, c.Domain.validate())
	return errors.Join(errs...)
}

func (c *SanctionsConfig) validate() error {
	var errs []error
	for i, s := range c.Sources {
		if s == "" {
			errs = append(errs, fmt.Errorf("screening.sanctions.sources[%d]: empty", i))
		}
		if u, err := url.Parse(s); err == nil && u.Scheme != "" && len(u.Scheme) > 1 {
			switch {
			case u.Scheme == "file" && u.Path != "":
			case (u.Scheme == "https" || u.Scheme == "http") && u.Host != "":
			default:
				errs = append(errs, fmt.Errorf("screening.sanctions.sources[%d]: %q is neither an http(s) URL nor a local path or file:// URL", i, s))
			}
		}
	}
	if c.Enabled && len(c.Sources) == 0 {
		errs = append(errs, fmt.Errorf("screening.sanctions.sources: empty while sanctions screening is enabled"))
	}
	if d := time.Duration(c.RefreshInterval); d < time.Minute {
		errs = append(errs, fmt.Errorf("screening.sanctions.refresh_interval: %s is below 1m", d))
	}
	if c.CacheDir == "" {
		errs = append(errs, fmt.Errorf("screening.sanctions.cache_dir: empty"))
	}
	return errors.Join(errs...)
}

func (c *DomainConfig) validate() error {
	var errs []error
	for _, f := range []struct{ name, value string }{{"rdap_base_url", c.RDAPBaseURL}, {"bootstrap_url", c.BootstrapURL}} {
		if f.value == "" && f.name == "rdap_base_url" {
			continue // the bootstrap decides
		}
		u, err := url.Parse(f.value)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			errs = append(errs, fmt.Errorf("screening.domain.%s: %q is not an http(s) URL", f.name, f.value))
		}
	}
	if c.Resolver != "" {
		if _, err := netip.ParseAddrPort(c.Resolver); err != nil {
			if host, _, splitErr := net.SplitHostPort(c.Resolver); splitErr != nil || host == "" {
				errs = append(errs, fmt.Errorf("screening.domain.resolver: %q is not ip:port", c.Resolver))
			} else {
				errs = append(errs, fmt.Errorf("screening.domain.resolver: %q: use an IP address, not a host name", c.Resolver))
			}
		}
	}
	for _, d := range []struct {
		name     string
		v        Duration
		min, max time.Duration
	}{
		{"bootstrap_refresh", c.BootstrapRefresh, time.Minute, 0},
		{"rdap_timeout", c.RDAPTimeout, time.Millisecond, 30 * time.Second},
		{"dns_timeout", c.DNSTimeout, time.Millisecond, 30 * time.Second},
		{"positive_ttl", c.PositiveTTL, time.Second, 0},
		{"negative_ttl", c.NegativeTTL, time.Second, 0},
	} {
		v := time.Duration(d.v)
		if v < d.min || (d.max > 0 && v > d.max) {
			if d.max > 0 {
				errs = append(errs, fmt.Errorf("screening.domain.%s: %s is outside %s..%s", d.name, v, d.min, d.max))
			} else {
				errs = append(errs, fmt.Errorf("screening.domain.%s: %s is below %s", d.name, v, d.min))
			}
		}
	}
	if c.CacheSize < 1 || c.CacheSize > 1_000_000 {
		errs = append(errs, fmt.Errorf("screening.domain.cache_size: %d is outside 1..1000000", c.CacheSize))
	}
	if c.NewDomainDays < 1 || c.NewDomainDays > 36500 {
		errs = append(errs, fmt.Errorf("screening.domain.new_domain_days: %d is outside 1..36500", c.NewDomainDays))
	}
	return errors.Join(errs...)
}
