package index

import (
	"testing"

	"github.com/payguard/payguard/internal/plainurl"
	"github.com/payguard/payguard/internal/plainurl/plainurltest"
)

// A plain URL takes no full parse; what it is spared must be exactly what the full parse gives: its key
// (normalizeURL) and its site (siteOfParsed), for every URL plainurl.Parse accepts.
func TestPlainURLsKeyAsParsed(t *testing.T) {
	plain := 0
	for _, s := range plainurltest.Corpus(200_000) {
		checkPlainURL(t, s)
		if _, ok := plainurl.Parse(s); ok {
			plain++
		}
	}
	if plain < 10_000 {
		t.Fatalf("only %d plain URLs in the corpus: it tests too little", plain)
	}
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

func FuzzPlainURL(f *testing.F) {
	for _, s := range plainurltest.Corpus(200) {
		f.Add(s)
	}
	f.Fuzz(checkPlainURL)
}
