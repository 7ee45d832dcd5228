package proxy

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/payguard/payguard/store/memory"
)

// A seller that answered 402 under one spelling of its host cannot have an upgrade let through under
// another spelling that reaches the same server: letter case, a trailing dot (DNS's absolute form), a port,
// an IPv6 literal written otherwise (zeros, case, an IPv4-mapped address) or a Unicode host name and its
// IDNA (punycode) form. Each pair: the 402 came from the first URL, the upgrade asks for the second.
func TestUpgradeRefusedUnderAnyHostSpelling(t *testing.T) {
	pairs := [][2]string{
		{"http://seller.example/pay", "http://seller.example./ws"},
		{"http://seller.example./pay", "http://seller.example/ws"},
		{"http://seller.example/pay", "http://SELLER.Example.:8080/ws"},
		{"http://[2001:db8::1]/pay", "http://[2001:DB8:0:0::1]:443/ws"},
		{"http://1.2.3.4/pay", "http://[::ffff:1.2.3.4]/ws"},
		{"http://xn--bcher-kva.example/pay", "http://bücher.example/ws"},
		{"http://bücher.example/pay", "http://XN--BCHER-KVA.example./ws"},
		{"http://bücher.example/pay", "http://BÜCHER.example/ws"},
		{"http://seller.example/pay", "http://ｓｅｌｌｅｒ.example/ws"},  // fullwidth, IDNA maps it to ASCII
		{"http://seller.example/pay", "http://seller。example。/ws"}, // ideographic full stops, the last one trailing
	}
	for _, pair := range pairs {
		h := newHarness(t, memory.New(), testRules())
		h.proxy.sellerAnswered402(mustRequest(t, pair[0]))
		up := mustRequest(t, pair[1])
		up.Header.Set("Upgrade", "websocket")
		up.Header.Set("Connection", "Upgrade")
		if why := h.proxy.upgradeRefusal(up); !strings.Contains(why, "answered 402") {
			t.Errorf("402 from %s, upgrade to %s: %q, want a refusal", pair[0], pair[1], why)
		}
	}
	// Different hosts stay different.
	h := newHarness(t, memory.New(), testRules())
	h.proxy.sellerAnswered402(mustRequest(t, "http://seller.example/pay"))
	for _, other := range []string{"http://other.example/ws", "http://seller.example.org/ws", "http://[2001:db8::2]/ws"} {
		if why := h.proxy.upgradeRefusal(mustRequest(t, other)); why != "" {
			t.Errorf("upgrade to %s refused: %s", other, why)
		}
	}
}

func mustRequest(t *testing.T, raw string) *http.Request {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return (&http.Request{Method: "GET", URL: u, Header: http.Header{}, Host: u.Host}).WithContext(t.Context())
}

// End to end: the seller answered 402 at 127.0.0.1, and the agent asks for the upgrade at the same server
// through the IPv4-mapped IPv6 literal [::ffff:127.0.0.1], which the proxy dials as 127.0.0.1: it is
// refused and the seller never switches protocols (before the host was canonical, it switched).
func TestUpgradeRefusedUnderMappedAddressEndToEnd(t *testing.T) {
	s := newUpgradeSeller(t, false)
	h := newHarness(t, memory.New(), testRules(), trustServer(s.srv))
	c := dialThrough(t, h, s.srv)
	fmt.Fprint(c, c.request("GET", "/pay"))
	if resp, _ := c.read(t); resp.StatusCode != http.StatusPaymentRequired {
		t.Fatalf("/pay = %d", resp.StatusCode)
	}
	mapped := strings.Replace(s.srv.URL, "127.0.0.1", "[::ffff:127.0.0.1]", 1)
	fmt.Fprintf(c, "GET %s/ws HTTP/1.1\r\nHost: %s\r\n%s\r\n", mapped, strings.TrimPrefix(mapped, "http://"), wsHeaders)
	resp, body := c.read(t)
	if resp.StatusCode == http.StatusSwitchingProtocols {
		t.Fatalf("upgrade through %s was switched", mapped)
	}
	if r := decodeRefusal(t, resp, []byte(body)); !strings.Contains(strings.Join(r.Reasons, " "), "answered 402") {
		t.Errorf("upgrade through %s: %d %s", mapped, resp.StatusCode, body)
	}
	if n := s.switched.Load(); n != 0 {
		t.Errorf("the seller switched protocols %d times", n)
	}
}
