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
	plainurltest.Check(t, checkPlainMerchantDomain, func(s string) bool {
		_, ok := plainurl.Parse(strings.TrimSpace(s))
		return ok
	})
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

func FuzzPlainMerchantDomain(f *testing.F) { plainurltest.Fuzz(f, checkPlainMerchantDomain) }
