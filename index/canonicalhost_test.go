package index

import (
	"net"
	"net/netip"
	"strings"
	"testing"

	"golang.org/x/net/idna"
)

// canonicalHostBefore is CanonicalHost as it was before its fast paths (issue 36: a dotted quad returned
// as given, no SplitHostPort without a colon); the fast paths must not change any answer.
func canonicalHostBefore(host string) string {
	host = strings.TrimSpace(host)
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if a, err := netip.ParseAddr(host); err == nil {
		return a.Unmap().String()
	}
	if a, err := idna.Lookup.ToASCII(host); err == nil && a != "" {
		host = a
	}
	return strings.ToLower(strings.TrimRight(host, "."))
}

var canonicalHostSeeds = []string{
	"127.0.0.1", "127.0.0.1:8080", " 10.0.0.1 ", "010.0.0.1", "1.2.3.4.", "[::1]", "[::1]:443", "::1",
	"::ffff:10.0.0.1", "[::ffff:10.0.0.1]:80", "fe80::1%eth0", "[fe80::1%25eth0]", "Example.COM.", "bücher.example",
	"a:b", "a:b:c", "host:", ":80", "", "0.0.0.0", "255.255.255.255", "256.1.1.1", "1.2.3", "1.2.3.4:", "1.2.3.4:x",
}

func TestCanonicalHostFastPathsMatch(t *testing.T) {
	for _, h := range canonicalHostSeeds {
		if got, want := CanonicalHost(h), canonicalHostBefore(h); got != want {
			t.Errorf("CanonicalHost(%q) = %q, before %q", h, got, want)
		}
	}
}

func FuzzCanonicalHost(f *testing.F) {
	for _, h := range canonicalHostSeeds {
		f.Add(h)
	}
	f.Fuzz(func(t *testing.T, h string) {
		if got, want := CanonicalHost(h), canonicalHostBefore(h); got != want {
			t.Errorf("CanonicalHost(%q) = %q, before %q", h, got, want)
		}
	})
}
