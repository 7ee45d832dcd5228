package index

import (
	"testing"
	"time"

	"github.com/payguard/payguard/store"
)

// Every spelling of one host that reaches the same server is one site in a category's median, so a seller
// cannot count twice (or escape its own site's exclusion) by spelling its host otherwise.
func TestSiteOfSpellings(t *testing.T) {
	for _, set := range [][]string{
		{"https://api.seller.example/x", "https://SELLER.example./y", "https://seller.example:8443/z"},
		{"https://bücher.example/", "https://xn--bcher-kva.example/", "https://BÜCHER.example./"},
		{"http://[2001:db8::1]/", "http://[2001:DB8:0:0::1]:8080/"},
		{"http://1.2.3.4/", "http://[::ffff:1.2.3.4]/"},
	} {
		want := SiteOf(set[0])
		for _, u := range set[1:] {
			if got := SiteOf(u); got != want || got == "" {
				t.Errorf("SiteOf(%s) = %q, SiteOf(%s) = %q: one site", u, got, set[0], want)
			}
		}
	}
}

// One server's IPv6 /64 is one site: a seller answering from many addresses of it counts once (and all of
// them are left out of its own comparison); another /64 is another site.
func TestSiteOfIPv6Prefix(t *testing.T) {
	a, b, c := SiteOf("http://[2001:db8::1]/"), SiteOf("http://[2001:db8::ffff:2]:8080/"), SiteOf("http://[2001:db8:0:1::1]/")
	if a != b || a != "2001:db8::/64" {
		t.Errorf("one /64: %q and %q", a, b)
	}
	if a == c {
		t.Errorf("two /64s are one site %q", a)
	}
	if v4 := SiteOf("http://1.2.3.4/"); v4 != "1.2.3.4" {
		t.Errorf("IPv4 site %q", v4)
	}
	var sample []store.CategoryPrice
	for _, host := range []string{"[2001:db8::2]", "[2001:db8::3]", "[2001:db8::4]", "[2001:db8::5]"} {
		u := "http://" + host + "/w"
		sample = append(sample, store.CategoryPrice{URL: u, Host: SiteOf(u), At: time.Unix(1000, 0),
			Offers: []store.Offer{{Scheme: "exact", Network: "eip155:8453", Asset: "0xusdc", Amount: "500000"}}})
	}
	if _, hosts := CategoryMedian(sample, "http://[2001:db8::1]/w", "eip155:8453", "0xusdc", time.Unix(1000, 0), 0); hosts != 0 {
		t.Errorf("a seller's own /64 counted as %d other sites", hosts)
	}
}
