package core

import (
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
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

// splitClientIP is clientIP as it was written before issue 36 (the hops split into a list first): the
// reference the walk without the list must agree with.
func splitClientIP(r *http.Request, trusted []netip.Prefix) string {
	peer := remoteAddr(r.RemoteAddr)
	if !peer.IsValid() {
		return r.RemoteAddr
	}
	if !isTrusted(peer, trusted) {
		return peer.String()
	}
	var hops []string
	for _, v := range r.Header.Values("X-Forwarded-For") {
		hops = append(hops, strings.Split(v, ",")...)
	}
	client := peer
	for i := len(hops) - 1; i >= 0; i-- {
		a, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			break
		}
		client = a.Unmap()
		if !isTrusted(client, trusted) {
			break
		}
	}
	return client.String()
}

// clientIP agrees with the split-list walk on every combination of hops (trusted, untrusted, malformed,
// empty, mapped, spaced) over one to three X-Forwarded-For headers.
func TestClientIPWalksAsSplit(t *testing.T) {
	trusted := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("127.0.0.1/32"), netip.MustParsePrefix("2001:db8::/32")}
	hops := []string{"10.2.2.2", " 1.2.3.4 ", "", "garbage", "::ffff:10.3.3.3", "2001:db8::7", "6.6.6.6", " ", "127.0.0.1"}
	var values []string
	for _, a := range hops {
		values = append(values, a)
		for _, b := range hops {
			values = append(values, a+","+b)
			for _, c := range hops[:4] {
				values = append(values, a+","+b+","+c)
			}
		}
	}
	n := 0
	for i, v := range values {
		for _, extra := range [][]string{nil, {values[(i*7)%len(values)]}, {values[(i*13)%len(values)], values[(i*3)%len(values)]}} {
			for _, remote := range []string{"10.1.1.1:1", "203.0.113.5:1", "[::ffff:10.1.1.1]:2", "nonsense"} {
				r := httptest.NewRequest("GET", "/", nil)
				r.RemoteAddr = remote
				for _, x := range append([]string{v}, extra...) {
					r.Header.Add("X-Forwarded-For", x)
				}
				if got, want := clientIP(r, trusted), splitClientIP(r, trusted); got != want {
					t.Fatalf("%s %q: %s, want %s", remote, r.Header.Values("X-Forwarded-For"), got, want)
				}
				n++
			}
		}
	}
}
