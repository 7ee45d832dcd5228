package sanctions

import (
	"strings"
	"testing"

	"github.com/payguard/payguard/screening"
)

// fullwidth writes ASCII letters and digits in their fullwidth forms (U+FF01..U+FF5E).
func fullwidth(s string) string {
	return strings.Map(func(r rune) rune {
		if r > ' ' && r < 0x7f {
			return r + 0xFEE0
		}
		return r
	}, s)
}

// A listed address written in a confusable form is still found: with a zero-width space or joiner inside,
// without its 0x, with a fullwidth "０ｘ" or fullwidth digits, with white space (ASCII, no-break,
// ideographic) around it. On the old code every one of these was "not listed" (risk low).
func TestListedAddressFoundInConfusableForms(t *testing.T) {
	l := loadFullList(t)
	n := 0
	for key := range l.addrs {
		if !strings.HasPrefix(key, "0x") || len(key) != 42 {
			continue
		}
		n++
		for _, form := range []string{
			key[:10] + "\u200b" + key[10:],                       // zero-width space
			"\u2060" + key + "\ufeff",                            // word joiner, BOM
			key[:2] + "\u200d" + key[2:20] + "\u00ad" + key[20:], // zero-width joiner, soft hyphen
			key[2:],                               // no 0x
			strings.ToUpper(key[2:]),              // no 0x, upper case
			"０ｘ" + key[2:],                        // fullwidth 0x
			fullwidth(key),                        // all fullwidth
			"\u00a0 " + key + "\u3000\t",          // no-break space, ideographic space, tab
			" " + key[:21] + " " + key[21:] + " ", // a space inside
		} {
			if len(l.ScreenAddress(form)) == 0 {
				t.Errorf("%s is listed; %q is not found", key, form)
			}
		}
	}
	if n < 50 {
		t.Fatalf("only %d EVM addresses on the full list; the test is not looking at them", n)
	}
}

// Every address on the real list is of a format screening.AddressKind recognizes (so the formats cover what
// OFAC lists; a listed address is never flagged unrecognized anyway, a match comes first); strings that are
// no address are not recognized.
func TestListedAddressesAreRecognized(t *testing.T) {
	l := loadFullList(t)
	// One XMR entry is 64 hex digits, a Monero key or transaction id rather than an address; recognizing
	// every 64-hex string would make "a hash" pass for a wallet.
	odd := map[string]bool{"5be5543ff73456ab9f2d207887e2af87322c651ea1a873c5b25b7ffae456c320": true}
	for _, a := range l.Addresses() {
		if screening.AddressKind(screening.NormalizeAddress(a.Address)) == "" && !odd[a.Address] {
			t.Errorf("%s %s is listed but not recognized as an address", a.Currency, a.Address)
		}
	}
	for _, s := range []string{"0xZZ", "hello world", "0xabc", "", "0x" + strings.Repeat("g", 40), "Acme Widgets LLC",
		"bc1qv7k70u2zynvem59u88ctdlaw7hc735d8xep9rr", "1BoatSLRHtKNngkdXEeobR76b53LETtpyU", "https://example.com"} {
		if k := screening.AddressKind(screening.NormalizeAddress(s)); k != "" {
			t.Errorf("%q recognized as %s", s, k)
		}
	}
}
