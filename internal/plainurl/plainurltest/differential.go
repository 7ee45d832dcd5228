package plainurltest

import "testing"

// Check runs check (a caller's fast path against its full parse, for one URL) over Corpus(200_000), and
// fails the test when fewer than 10,000 of the URLs are ones check compares (plain reports which): a
// corpus that drifted away from the plain form would test too little.
func Check(t *testing.T, check func(t *testing.T, s string), plain func(s string) bool) {
	t.Helper()
	n := 0
	for _, s := range Corpus(200_000) {
		check(t, s)
		if plain(s) {
			n++
		}
	}
	if n < 10_000 {
		t.Fatalf("only %d plain URLs in the corpus: it tests too little", n)
	}
}

// Fuzz fuzzes check from Corpus(200) as its seeds.
func Fuzz(f *testing.F, check func(t *testing.T, s string)) {
	for _, s := range Corpus(200) {
		f.Add(s)
	}
	f.Fuzz(check)
}
