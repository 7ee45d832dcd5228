package index

import (
	"testing"

	"github.com/payguard/payguard/internal/plainurl"
	"github.com/payguard/payguard/internal/plainurl/plainurltest"
)

// A plain URL takes no full parse; what it is spared must be exactly what the full parse gives: its key
// (normalizeURL) and its site (siteOfParsed), for every URL plainurl.Parse accepts.
func TestPlainURLsKeyAsParsed(t *testing.T) {
	plainurltest.Check(t, checkPlainURL, func(s string) bool { _, ok := plainurl.Parse(s); return ok })
}

func checkPlainURL(t *testing.T, s string) {
	t.Helper()
	u, ok := plainurl.Parse(s)
	if !ok {
		return
	}
	if key, err := normalizeURL(s); err != nil || key != u.Key {
		t.Fatalf("plain %q: key %q, the full parse %q, %v", s, u.Key, key, err)
	}
	if got, want := SiteOf(s), siteOfParsed(s); got != want {
		t.Fatalf("plain %q: site %q, the full parse %q", s, got, want)
	}
}

func FuzzPlainURL(f *testing.F) { plainurltest.Fuzz(f, checkPlainURL) }
