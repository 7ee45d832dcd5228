package policy

import (
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// Evaluate decides with a rule set's prepared lists (Facts.Lists) exactly as it does comparing the lists
// entry by entry: over random lists and facts mixing domains and their subdomains, other spellings of a host
// (case, trailing dot, IDN, IP addresses), EVM payees in every letter case, padded entries and non-EVM
// identifiers, strict allowlists or not. Lists made from other rules are not used.
func TestListsDecideAsTheLists(t *testing.T) {
	domains := []string{"example.com", "api.example.com", "EXAMPLE.com.", "evil.example", "sub.evil.example", "bücher.example",
		"xn--bcher-kva.example", "127.0.0.1", "::ffff:127.0.0.1", "2001:db8::1", "notexample.com", ".example.com", "", " spaced.example ",
		"com", "a.b.c.example.com", "*.example.com"}
	payees := []string{payeeA, strings.ToUpper(payeeA[2:]), "0X" + strings.ToUpper(payeeA[2:]), payeeB, " " + payeeB + " ",
		"0x" + strings.ToUpper(payeeB[2:]), "So1anaPayee11111111111111111111111111111111", "so1anapayee11111111111111111111111111111111",
		"0x1234", "", "0x" + strings.Repeat("g", 40)}
	r := rand.New(rand.NewPCG(36, 402))
	pick := func(l []string, n int) []string {
		out := []string{}
		for range r.IntN(n + 1) {
			out = append(out, l[r.IntN(len(l))])
		}
		return out
	}
	checked := 0
	for range 20_000 {
		f := cleanFacts()
		f.Rules.DomainAllowlist, f.Rules.DomainBlocklist = pick(domains, 4), pick(domains, 3)
		f.Rules.PayToAllowlist, f.Rules.PayToBlocklist = pick(payees, 4), pick(payees, 3)
		f.Rules.StrictAllowlist = r.IntN(2) == 0
		f.MerchantDomain = MerchantDomain(domains[r.IntN(len(domains))])
		f.Options = []Option{usdcOption(10_000, strings.TrimSpace(payees[r.IntN(len(payees))])), usdcOption(20_000, payees[r.IntN(len(payees))])}
		plain := Evaluate(f)
		f.Lists = f.Rules.Lists()
		if got := Evaluate(f); !reflect.DeepEqual(got, plain) {
			t.Fatalf("with prepared lists %+v\nwithout %+v\nrules %+v, domain %q, payees %q %q", got, plain, f.Rules, f.MerchantDomain,
				f.Options[0].PayTo, f.Options[1].PayTo)
		}
		// Lists of other rules (the same entries in other slices) are not taken for these.
		other := f.Rules.Clone()
		other.DomainBlocklist = append(other.DomainBlocklist, f.MerchantDomain)
		f.Lists = other.Lists()
		if f.Lists.of(&f.Rules) {
			t.Fatal("lists of another rule set taken for these rules")
		}
		if got := Evaluate(f); !reflect.DeepEqual(got, plain) {
			t.Fatalf("with another rule set's lists %+v\nwithout %+v", got, plain)
		}
		checked++
	}
	if checked == 0 {
		t.Fatal("nothing checked")
	}
}

// FuzzListsMatchAsEntries holds the prepared sets to the entry-by-entry checks they replace on any strings
// (review36): a domain or payee the set misses while the list holds it would let a blocked seller through.
// entries is split on '|'.
func FuzzListsMatchAsEntries(f *testing.F) {
	f.Add("api.example.com", "example.com|evil.example", payeeA, payeeA+"| "+payeeB)
	f.Add("a..example.com", ".example.com|", "0X"+strings.ToUpper(payeeA[2:]), strings.ToUpper(payeeA)+"|x")
	f.Add("b\u00fccher.example", "xn--bcher-kva.example|EXAMPLE.", "So1ana", " So1ana |so1ana")
	f.Fuzz(func(t *testing.T, host, domainEntries, payTo, payeeEntries string) {
		domain := MerchantDomain(host)
		dl, pl := strings.Split(domainEntries, "|"), strings.Split(payeeEntries, "|")
		r := &Rules{DomainBlocklist: dl, PayToBlocklist: pl}
		l := r.Lists()
		if got, want := domainBlockedBy(domain, r, l), domainListed(domain, dl); got != want {
			t.Fatalf("domain %q (of %q) in %q: set says %v, entries say %v", domain, host, dl, got, want)
		}
		if got, want := payeeBlockedBy(payTo, r, l), payeeListed(payTo, pl); got != want {
			t.Fatalf("payee %q in %q: set says %v, entries say %v", payTo, pl, got, want)
		}
	})
}
