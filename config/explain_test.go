package config

import (
	"strings"
	"testing"
)

// A configuration error names the key path as written and suggests the key meant; a value of the wrong
// kind says what the key wants, never a Go type.
func TestConfigErrorsNameTheKey(t *testing.T) {
	for _, tc := range []struct {
		yaml string
		want []string
		not  []string
	}{
		{"proxy:\n  hold_wiat: 10s\n", []string{"proxy.hold_wiat: unknown key (line 2); did you mean hold_wait?"}, []string{"config.ProxyConfig"}},
		{"prxy:\n  listen: 127.0.0.1:1\n", []string{"prxy: unknown key (line 1); did you mean proxy?"}, nil},
		{"server:\n  fees:\n    pay_too: \"0x1\"\n", []string{"server.fees.pay_too: unknown key (line 3); did you mean pay_to?"}, nil},
		{"rules:\n  daily_cap: 5\n", []string{"rules.daily_cap: unknown key", "did you mean daily_cap_usd?"}, nil},
		{"proxy:\n  cert_cache_size: lots\n", []string{`proxy.cert_cache_size (line 2): "lots" is not a whole number`}, []string{"int", "!!str"}},
		{"proxy:\n  hold_wait: soon\n", []string{`proxy.hold_wait (line 2): "soon" is not a duration such as 30s or 15m`}, []string{"config.Duration"}},
		{"proxy:\n  tunnel_hosts: a.example\n", []string{`proxy.tunnel_hosts (line 2): "a.example" is not a list`}, []string{"[]string"}},
		{"store:\n  zzz: 1\n", []string{"store.zzz: unknown key (line 2); known keys here: driver, path, redis"}, nil},
	} {
		_, err := Parse([]byte(tc.yaml))
		if err == nil {
			t.Errorf("%q: no error", tc.yaml)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%q: error %q lacks %q", tc.yaml, err, w)
			}
		}
		for _, n := range tc.not {
			if strings.Contains(err.Error(), n) {
				t.Errorf("%q: error %q shows %q", tc.yaml, err, n)
			}
		}
	}
}
