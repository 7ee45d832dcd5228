package core

import (
	"net/http/httptest"
	"net/netip"
	"testing"

	"github.com/payguard/payguard/server/trial"
)

func TestClientIP(t *testing.T) {
	trusted := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("127.0.0.1/32")}
	cases := []struct {
		remote, xff string
		trusted     []netip.Prefix
		want        string
	}{
		{"203.0.113.5:1", "1.2.3.4", nil, "203.0.113.5"},                 // no trusted proxies: the socket
		{"203.0.113.5:1", "1.2.3.4", trusted, "203.0.113.5"},             // untrusted peer: XFF ignored
		{"10.1.1.1:1", "1.2.3.4", trusted, "1.2.3.4"},                    // trusted peer
		{"10.1.1.1:1", "6.6.6.6, 1.2.3.4, 10.2.2.2", trusted, "1.2.3.4"}, // right-most untrusted
		{"10.1.1.1:1", "garbage, 10.2.2.2", trusted, "10.2.2.2"},         // malformed hop stops the walk
		{"10.1.1.1:1", "", trusted, "10.1.1.1"},
		{"[::ffff:10.1.1.1]:1", "2001:db8::1", trusted, "2001:db8::1"},
	}
	for _, c := range cases {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = c.remote
		if c.xff != "" {
			r.Header.Set("X-Forwarded-For", c.xff)
		}
		if got := clientIP(r, c.trusted); got != c.want {
			t.Errorf("%s xff %q: %s, want %s", c.remote, c.xff, got, c.want)
		}
	}
}

func TestTrialClientKeyGroupsIPv6By64(t *testing.T) {
	if trial.ClientKey("2001:db8:1:2:aaaa::1") != trial.ClientKey("2001:db8:1:2:bbbb::9") {
		t.Fatal("one /64 must share a counter")
	}
	if trial.ClientKey("2001:db8:1:3::1") == trial.ClientKey("2001:db8:1:2::1") {
		t.Fatal("different /64s must not share a counter")
	}
	if trial.ClientKey("::ffff:192.0.2.1") != "192.0.2.1" {
		t.Fatal("IPv4-mapped addresses count as IPv4")
	}
}
