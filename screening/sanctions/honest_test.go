package sanctions

import (
	"bufio"
	"os"
	"strings"
	"testing"
)

type honestName struct{ name, kind, locale string }

func readHonest(t testing.TB, file string) []honestName {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []honestName
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		if strings.HasPrefix(sc.Text(), "#") || strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		cols := strings.Split(sc.Text(), "\t")
		if len(cols) != 3 || (cols[1] != "company" && cols[1] != "person") {
			t.Fatalf("%s line %d: %q", file, line, sc.Text())
		}
		out = append(out, honestName{cols[0], cols[1], cols[2]})
	}
	return out
}

// TestHonestNames screens invented honest payee names (testdata/names_honest.tsv, made by gen_honest.py with
// Faker across 20 locales) against the benchmark list: none may be exact (a block no one can approve), and
// at most maxHonestPossible of the companies, and of the people, may be possible (a hold a person clears).
func TestHonestNames(t *testing.T) {
	l := loadFullList(t)
	for _, file := range []string{"testdata/names_honest.tsv", "testdata/names_honest_heldout.tsv", "testdata/names_honest_fresh.tsv"} {
		t.Run(file, func(t *testing.T) { evalHonest(t, l, file) })
	}
}

func evalHonest(t *testing.T, l *List, file string) {
	type tally struct{ n, exact, possible int }
	by := map[string]*tally{"company": {}, "person": {}}
	for _, h := range readHonest(t, file) {
		r := l.ScreenName(h.name)
		tl := by[h.kind]
		tl.n++
		switch {
		case len(r.Exact) > 0:
			tl.exact++
			t.Errorf("exact   %-40q (%s, %s): %v", h.name, h.kind, h.locale, brief(r.Exact))
		case len(r.Possible) > 0:
			tl.possible++
			t.Logf("possible %-40q (%s, %s): %v", h.name, h.kind, h.locale, brief(r.Possible))
		}
	}
	for _, kind := range []string{"company", "person"} {
		tl := by[kind]
		if tl.n < 1000 {
			t.Fatalf("%s: %d names, want at least 1000", kind, tl.n)
		}
		t.Logf("%-8s %d names: exact %d, possible %d = %.2f%%", kind, tl.n, tl.exact, tl.possible, 100*float64(tl.possible)/float64(tl.n))
		if float64(tl.possible) > maxHonestPossible*float64(tl.n) {
			t.Errorf("%s: %d/%d possible, above the ceiling %.1f%%", kind, tl.possible, tl.n, 100*maxHonestPossible)
		}
	}
}

// maxHonestPossible is the ceiling on possible matches among the honest names, per kind (issue 34).
const maxHonestPossible = 0.005
