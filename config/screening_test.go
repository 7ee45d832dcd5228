package config

import (
	"reflect"

	"gopkg.in/yaml.v3"
	"strings"
	"testing"
	"time"
)

func TestScreeningDefaults(t *testing.T) {
	c, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	s := c.Screening
	if !s.Sanctions.Enabled || time.Duration(s.Sanctions.RefreshInterval) != 24*time.Hour ||
		s.Sanctions.CacheDir != "./payguard-data/sanctions" || len(s.Sanctions.Sources) != 4 {
		t.Errorf("sanctions defaults %+v", s.Sanctions)
	}
	d := s.Domain
	if !d.Enabled || d.NewDomainDays != 30 || time.Duration(d.RDAPTimeout) != 2*time.Second ||
		time.Duration(d.DNSTimeout) != time.Second || d.BootstrapURL != "https://data.iana.org/rdap/dns.json" ||
		d.RDAPBaseURL != "" || d.Resolver != "" {
		t.Errorf("domain defaults %+v", d)
	}
}

func TestScreeningParse(t *testing.T) {
	c, err := Parse([]byte(`
screening:
  sanctions:
    enabled: true
    sources: [/srv/ofac, "file:///srv/extra/sdn_comments.csv"]
    refresh_interval: 12h
    cache_dir: /var/lib/payguard/sanctions
  domain:
    enabled: false
    rdap_base_url: http://127.0.0.1:8080/rdap/
    resolver: 127.0.0.1:5353
    rdap_timeout: 500ms
    dns_timeout: 250ms
    positive_ttl: 1h
    negative_ttl: 30s
    cache_size: 100
    new_domain_days: 60
`))
	if err != nil {
		t.Fatal(err)
	}
	s := c.Screening
	if s.Sanctions.Sources[0] != "/srv/ofac" || s.Sanctions.Sources[1] != "file:///srv/extra/sdn_comments.csv" || time.Duration(s.Sanctions.RefreshInterval) != 12*time.Hour {
		t.Errorf("sanctions %+v", s.Sanctions)
	}
	d := s.Domain
	if d.Enabled || d.RDAPBaseURL != "http://127.0.0.1:8080/rdap/" || d.Resolver != "127.0.0.1:5353" ||
		time.Duration(d.RDAPTimeout) != 500*time.Millisecond || time.Duration(d.NegativeTTL) != 30*time.Second ||
		d.CacheSize != 100 || d.NewDomainDays != 60 || d.BootstrapURL != "https://data.iana.org/rdap/dns.json" {
		t.Errorf("domain %+v", d)
	}
}

func TestScreeningRejects(t *testing.T) {
	tests := []struct{ yaml, want string }{
		{"screening: {domain: {rdap_timeout: 0s}}", "rdap_timeout"},
		{"screening: {domain: {dns_timeout: 1m}}", "dns_timeout"},
		{"screening: {domain: {resolver: dns.google:53}}", "IP address"},
		{"screening: {domain: {resolver: 8.8.8.8}}", "ip:port"},
		{"screening: {domain: {rdap_base_url: ftp://x/}}", "rdap_base_url"},
		{"screening: {domain: {bootstrap_url: ''}}", "bootstrap_url"},
		{"screening: {domain: {new_domain_days: 0}}", "new_domain_days"},
		{"screening: {domain: {cache_size: 0}}", "cache_size"},
		{"screening: {domain: {negative_ttl: 10ms}}", "negative_ttl"},
		{"screening: {domain: {newdomain_days: 3}}", "newdomain_days"},
		{"screening: {sanctions: {sources: []}}", "sources"},
		{"screening: {sanctions: {sources: ['ftp://x/sdn.csv']}}", "sources[0]"},
		{"screening: {sanctions: {sources: ['https:///sdn.csv']}}", "sources[0]"},
		{"screening: {sanctions: {sources: ['file://']}}", "sources[0]"},
		{"screening: {sanctions: {refresh_interval: 1s}}", "refresh_interval"},
		{"screening: {sanctions: {cache_dir: ''}}", "cache_dir"},
	}
	for _, tt := range tests {
		if _, err := Parse([]byte(tt.yaml)); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want it to mention %q", tt.yaml, err, tt.want)
		}
	}
	// Disabled sanctions may have no sources.
	if _, err := Parse([]byte("screening: {sanctions: {enabled: false, sources: []}}")); err != nil {
		t.Errorf("disabled sanctions without sources: %v", err)
	}
}

// TestScreeningDefaultYAMLMatchesCode keeps the documented default file and defaultScreening in step.
func TestScreeningDefaultYAMLMatchesCode(t *testing.T) {
	var fromFile struct {
		Screening ScreeningConfig `yaml:"screening"`
	}
	if err := yaml.Unmarshal(DefaultYAML(), &fromFile); err != nil {
		t.Fatal(err)
	}
	if want := defaultScreening(); !reflect.DeepEqual(fromFile.Screening, want) {
		t.Errorf("default.yaml screening %+v\n!= defaultScreening() %+v", fromFile.Screening, want)
	}
}
