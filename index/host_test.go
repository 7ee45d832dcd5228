package index

import "testing"

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
	if a, b := SiteOf("http://[2001:db8::1]/"), SiteOf("http://[2001:db8::2]/"); a == b {
		t.Errorf("two IPv6 addresses are one site %q", a)
	}
}
