package proxy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/payguard/payguard/config"
	"github.com/payguard/payguard/store/memory"
)

// OptionsFromConfig carries each proxy: setting into the Options, and the values it accepts and their
// defaults are config's: a value config refuses is refused with config's words, and an Option left zero
// gets config's default in New (stated once, in config/proxy.go).
func TestOptionsFromConfig(t *testing.T) {
	cfg, err := config.Default()
	if err != nil {
		t.Fatal(err)
	}
	cfg.Proxy.Budget, cfg.Proxy.TunnelHosts, cfg.Proxy.Upgrades = "team-a", []string{"pass.example"}, config.UpgradesAllow
	cfg.Proxy.HoldWait, cfg.Proxy.HoldTTL, cfg.Proxy.TicketTTLMax = config.Duration(7*time.Second), config.Duration(9*time.Minute), config.Duration(2*time.Minute)
	cfg.Proxy.MaxUnpaidPerSite, cfg.Proxy.CertCacheSize, cfg.Proxy.MaxIdleConnsPerHost = 11, 12, 13
	cfg.Index.Retention = config.Duration(48 * time.Hour)
	o, err := OptionsFromConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if o.Budget != "team-a" || len(o.TunnelHosts) != 1 || o.Upgrades != UpgradesAllow || o.HoldWait != 7*time.Second ||
		o.HoldTTL != 9*time.Minute || o.TicketTTLMax != 2*time.Minute || o.MaxUnpaidPerSite != 11 || o.CertCacheSize != 12 ||
		o.MaxIdleConnsPerHost != 13 || o.IndexMaxAge != 48*time.Hour || o.UpstreamRoots == nil || o.Rules.DailyCapUSD != cfg.Rules.DailyCapUSD {
		t.Fatalf("options %+v", o)
	}

	cfg.Proxy.Upgrades = "sometimes"
	_, err = OptionsFromConfig(cfg)
	if want := config.CheckUpgrades("sometimes"); err == nil || err.Error() != want.Error() {
		t.Errorf("upgrades: %v, want config's %v", err, want)
	}
	cfg.Proxy.Upgrades = ""
	cfg.Proxy.UpstreamCAFiles = []string{filepath.Join(t.TempDir(), "none.pem")}
	if _, err := OptionsFromConfig(cfg); err == nil || !strings.Contains(err.Error(), "proxy.upstream_ca_files") {
		t.Errorf("a missing upstream CA file: %v", err)
	}
	notPEM := filepath.Join(t.TempDir(), "x.pem")
	os.WriteFile(notPEM, []byte("not a certificate"), 0o600)
	cfg.Proxy.UpstreamCAFiles = []string{notPEM}
	if _, err := OptionsFromConfig(cfg); err == nil || !strings.Contains(err.Error(), "holds no PEM certificate") {
		t.Errorf("a file without a certificate: %v", err)
	}
}

// An Option left zero is config's default once New has run, so a proxy built without a configuration
// (tests, the load runs) behaves as the default file says.
func TestNewDefaultsAreConfigs(t *testing.T) {
	p, _, _ := newTestProxy(t, memory.New(), testRules(), func(su *setup) { su.HoldTTL = 0 })
	def := config.DefaultProxy()
	o := p.opts
	if o.Budget != def.Budget || string(o.Upgrades) != def.Upgrades || o.HoldTTL != time.Duration(def.HoldTTL) ||
		o.CertCacheSize != def.CertCacheSize || o.MaxIdleConnsPerHost != def.MaxIdleConnsPerHost ||
		o.MaxUnpaidPerSite != def.MaxUnpaidPerSite {
		t.Fatalf("zero options became %+v, config's defaults are %+v", o, def)
	}
}
