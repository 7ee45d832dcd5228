package proxy

import (
	"testing"

	"github.com/payguard/payguard/internal/plainurl/plainurltest"
)

// TestTargetOfMatchesEachKey holds the decision's one parse of its URL (targetOf) to the keys it replaces,
// each computed on its own as before: a seller alarm's key and the unpaid
// bound's site, for every spelling a seller or an agent can make a URL take (other spellings of a host,
// IPv6, ports, a bare host, no host, unparsable).
func TestTargetOfMatchesEachKey(t *testing.T) {
	for _, u := range []string{
		"https://api.seller.example/generate?x=1", "https://WWW.Seller.Example./x", "http://127.0.0.1:18080/402",
		"https://[2001:db8::1]:8443/generate", "https://[::ffff:10.0.0.1]/x", "https://xn--bcher-kva.example/",
		"https://bücher.example/", "http://localhost/x", "seller.example", "seller.example:443", "/relative/path",
		"", "http://%zz/", "https://user:pw@seller.example/", "mcp://tools/call", "https:///nohost",
	} {
		checkTarget(t, u)
	}
	// URLs near the plain form (internal/plainurl), which index.SiteOf reads without a parse.
	for _, u := range plainurltest.Corpus(20_000) {
		checkTarget(t, u)
	}
}

func checkTarget(t *testing.T, u string) {
	t.Helper()
	got := targetOf(u)
	want := target{url: u, alarmSite: alarmSite(u), ticketSite: siteOfTicket(u)}
	if got != want {
		t.Fatalf("targetOf(%q) = %+v, want %+v", u, got, want)
	}
}
