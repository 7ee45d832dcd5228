package config

import (
	"strings"
	"testing"
	"time"

	"github.com/payguard/payguard/policy"
)

func TestDefaultConfig(t *testing.T) {
	c, err := Default()
	if err != nil {
		t.Fatalf("embedded default does not parse: %v", err)
	}
	if c.Proxy.Listen != "127.0.0.1:8402" || c.Admin.Listen != "127.0.0.1:8403" {
		t.Errorf("listeners = %q, %q", c.Proxy.Listen, c.Admin.Listen)
	}
	if c.DataDir != "./payguard-data" || c.Keys.ReceiptKeyFile != "./payguard-data/receipt-keys.json" {
		t.Errorf("state paths = %q, %q", c.DataDir, c.Keys.ReceiptKeyFile)
	}
	if time.Duration(c.Proxy.HoldWait) != 30*time.Second || c.Proxy.MaxIdleConnsPerHost != 256 {
		t.Errorf("hold_wait = %s, max_idle_conns_per_host = %d", c.Proxy.HoldWait, c.Proxy.MaxIdleConnsPerHost)
	}
	want := policy.DefaultRules()
	if c.Rules.MaxPerPaymentUSD != want.MaxPerPaymentUSD || c.Rules.HoldAboveUSD != want.HoldAboveUSD ||
		c.Rules.DailyCapUSD != want.DailyCapUSD || len(c.Rules.AllowedNetworks) != 2 || !c.Rules.USDCOnly ||
		c.Rules.MaxPriceMultiple == nil || *c.Rules.MaxPriceMultiple != 5 {
		t.Errorf("default rules differ from SPEC: %+v", c.Rules)
	}
}

func TestProxyConfigParse(t *testing.T) {
	c, err := Parse([]byte(`
proxy:
  listen: 0.0.0.0:9000
  tunnel_hosts: [pinned.example.com, "api.example.org:443"]
  hold_wait: 5s
  hold_ttl: 2m
admin:
  listen: 127.0.0.1:9001
  token_file: /run/secrets/payguard-admin
rules:
  daily_cap_usd: 2.5
  allowed_networks: [eip155:84532]
`))
	if err != nil {
		t.Fatal(err)
	}
	if c.Proxy.Listen != "0.0.0.0:9000" || len(c.Proxy.TunnelHosts) != 2 || time.Duration(c.Proxy.HoldWait) != 5*time.Second ||
		time.Duration(c.Proxy.HoldTTL) != 2*time.Minute || c.Admin.TokenFile != "/run/secrets/payguard-admin" {
		t.Errorf("parsed = %+v %+v", c.Proxy, c.Admin)
	}
	if c.Rules.DailyCapUSD != 2_500_000 || c.Rules.AllowedNetworks[0] != "eip155:84532" {
		t.Errorf("rules = %+v", c.Rules)
	}
	// Omitted keys keep their defaults.
	if c.Proxy.MaxIdleConnsPerHost != 256 || c.Rules.HoldAboveUSD != 250_000 {
		t.Errorf("defaults lost: %+v %+v", c.Proxy, c.Rules)
	}
}

func TestProxyConfigRejects(t *testing.T) {
	for name, yaml := range map[string]string{
		"unknown key":        "proxy:\n  listen: 127.0.0.1:1\n  lisen: x\n",
		"unknown rule":       "rules:\n  max_per_payment: 1\n",
		"bad listen":         "proxy:\n  listen: nowhere\n",
		"bad admin listen":   "admin:\n  listen: 8403\n",
		"bad duration":       "proxy:\n  hold_wait: soon\n",
		"negative wait":      "proxy:\n  hold_wait: -1s\n",
		"short ttl":          "proxy:\n  hold_ttl: 1s\n",
		"half a CA":          "proxy:\n  ca_cert_file: a.pem\n  ca_key_file: \"\"\n",
		"tunnel wildcard":    "proxy:\n  tunnel_hosts: [\"*.example.com\"]\n",
		"zero cache":         "proxy:\n  cert_cache_size: 0\n",
		"empty receipt keys": "keys:\n  receipt_key_file: \"\"\n",
		"float string cap":   "rules:\n  daily_cap_usd: \"25\"\n",
	} {
		if _, err := Parse([]byte(yaml)); err == nil {
			t.Errorf("%s: accepted %q", name, yaml)
		} else if strings.TrimSpace(err.Error()) == "" {
			t.Errorf("%s: empty error", name)
		}
	}
}
