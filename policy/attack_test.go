package policy

import "testing"

// An IP address has one spelling for the domain rules: a seller on a blocklisted address (or outside an
// allowlist of addresses) that sends the agent to another spelling of it ([::ffff:10.0.0.1] is dialled as
// 10.0.0.1; an IPv6 address may be written with upper-case hex or uncompressed zeros) is judged as that
// address. Before canonicalHost read IP addresses, each of these was a domain the blocklist did not name.
func TestAttackDomainRulesIPSpellings(t *testing.T) {
	for url, entry := range map[string]string{
		"http://[::ffff:10.0.0.1]:8080/x":      "10.0.0.1",
		"http://[::ffff:a00:1]/x":              "10.0.0.1",
		"http://[2001:DB8:0:0:0:0:0:1]/x":      "2001:db8::1",
		"http://[2001:db8::1]/x":               "2001:DB8:0::1",
		"http://[fe80::1%25eth0]/x":            "fe80::1",
		"http://[0:0:0:0:0:ffff:7f00:1]:4021/": "127.0.0.1",
	} {
		f := cleanFacts()
		f.MerchantDomain = MerchantDomain(url)
		f.Rules.DomainBlocklist = []string{entry}
		if out := Evaluate(f); out.Decision != Block {
			t.Errorf("%s with %s blocklisted (domain %q): %s %q", url, entry, f.MerchantDomain, out.Decision, out.ReasonStrings())
		}
	}
	if got := MerchantDomain("http://[::ffff:10.0.0.1]/"); got != "10.0.0.1" {
		t.Errorf("MerchantDomain of an IPv4-mapped address = %q, want the IPv4 address", got)
	}
}
