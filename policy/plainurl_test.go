package policy

import (
	"strings"
	"testing"

	"github.com/payguard/payguard/internal/plainurl"
	"github.com/payguard/payguard/internal/plainurl/plainurltest"
)

// MerchantDomain takes a plain URL's host without parsing the URL: for every URL plainurl.Parse accepts it
// must be what the full parse (merchantDomainParsed) gives.
func TestPlainURLsMerchantDomainAsParsed(t *testing.T) {
	plain := 0
	for _, s := range plainurltest.Corpus(200_000) {
		checkPlainMerchantDomain(t, s)
		if _, ok := plainurl.Parse(strings.TrimSpace(s)); ok {
			plain++
		}
	}
	if plain < 10_000 {
		t.Fatalf("only %d plain URLs in the corpus: it tests too little", plain)
	}
}

func checkPlainMerchantDomain(t *testing.T, s string) {
	t.Helper()
	s = strings.TrimSpace(s)
	if _, ok := plainurl.Parse(s); !ok {
		return
	}
	if got, want := MerchantDomain(s), merchantDomainParsed(s); got != want || got == "" {
		t.Fatalf("plain %q: merchant domain %q, the full parse %q", s, got, want)
	}
}

func FuzzPlainMerchantDomain(f *testing.F) {
	for _, s := range plainurltest.Corpus(200) {
		f.Add(s)
	}
	f.Fuzz(checkPlainMerchantDomain)
}
