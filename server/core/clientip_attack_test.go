package core

import (
	"math/rand/v2"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
)

// hostileHops are X-Forwarded-For hops an attacker (or a broken proxy) may send: zoned IPv6 (which no
// prefix contains), ports and brackets (not addresses), tabs and Unicode spaces (TrimSpace trims some), NUL,
// empty hops, mapped addresses, addresses in trusted ranges.
var hostileHops = []string{"10.2.2.2", "\t1.2.3.4\t", "", " ", "fe80::1%eth0", "10.0.0.1%x", "[2001:db8::1]",
	"1.2.3.4:80", "\u00a06.6.6.6", "\u00856.6.6.6\u0085", "::ffff:127.0.0.1", "2001:db8::7", "7.7.7.7\x00",
	"0.0.0.0", "::", "127.0.0.1", "999.1.1.1", "::ffff:6.6.6.6", "2001:db8::%25"}

// The walk without the list (serve4) agrees with the split-list walk on random hostile X-Forwarded-For
// values: many hops, many repeated headers, hops from hostileHops (attack2). And an untrusted peer's
// address is its key whatever it sends.
func TestClientIPHostileForwardedFor(t *testing.T) {
	trusted := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("127.0.0.1/32"),
		netip.MustParsePrefix("2001:db8::/32"), netip.MustParsePrefix("fe80::/10")}
	rng := rand.New(rand.NewPCG(36, 2))
	for n := 0; n < 20000; n++ {
		r := httptest.NewRequest("GET", "/", nil)
		remote := []string{"10.1.1.1:1", "203.0.113.5:1", "[::ffff:10.1.1.1]:2", "[fe80::1%eth0]:3", "nonsense"}[rng.IntN(5)]
		r.RemoteAddr = remote
		headers := 1 + rng.IntN(4)
		if rng.IntN(50) == 0 {
			headers = 100 + rng.IntN(100)
		}
		for h := 0; h < headers; h++ {
			hops := make([]string, rng.IntN(6))
			if rng.IntN(100) == 0 {
				hops = make([]string, 5000+rng.IntN(5000)) // a huge header
			}
			for i := range hops {
				hops[i] = hostileHops[rng.IntN(len(hostileHops))]
			}
			r.Header.Add("X-Forwarded-For", strings.Join(hops, ","))
		}
		got, want := clientIP(r, trusted), splitClientIP(r, trusted)
		if got != want {
			t.Fatalf("%s %q: %s, want %s", remote, r.Header.Values("X-Forwarded-For"), got, want)
		}
		if peer := remoteAddr(remote); peer.IsValid() && !isTrusted(peer, trusted) && got != peer.String() {
			t.Fatalf("untrusted peer %s chose its key %s", remote, got)
		}
	}
}
