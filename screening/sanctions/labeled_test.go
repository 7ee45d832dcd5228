package sanctions

import (
	"bufio"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/payguard/payguard/screening"
)

type labeledQuery struct {
	query, kind, source string
	uid                 int // 0: must not match anything
}

func readLabeled(t testing.TB, file string) []labeledQuery {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []labeledQuery
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		if strings.HasPrefix(sc.Text(), "#") || strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		cols := strings.Split(sc.Text(), "\t")
		if len(cols) != 4 {
			t.Fatalf("%s line %d: %d columns", file, line, len(cols))
		}
		uid, err := strconv.Atoi(cols[1])
		if err != nil {
			t.Fatalf("%s line %d: %v", file, line, err)
		}
		out = append(out, labeledQuery{query: cols[0], uid: uid, kind: cols[2], source: cols[3]})
	}
	return out
}

// TestLabeledNames measures recall and the false-positive rate on the labeled sets (built from the real list
// by testdata/gen_labeled.py; see docs/SCREENING.md) against the benchmark list: names_labeled.tsv is the
// development set the matcher was tuned on, names_heldout.tsv the same recipe on other entries (generated
// once; its misses were later seen, so it is no longer clean), names_heldout2.tsv the same recipe on entries
// neither uses, the fresh held-out set.
//
//   - recall: share of variant queries whose entry comes back (exact or possible);
//   - false-positive rate: share of must-not-match queries that return any match.
//
// The floors are the measured figures rounded down a little, so a matcher change that loses recall or
// gains false positives fails here.
func TestLabeledNames(t *testing.T) {
	l := loadFullList(t)
	for _, set := range []struct {
		file              string
		minRecall, maxFPR float64
	}{
		{"testdata/names_labeled.tsv", minDevRecall, maxDevFPR},
		{"testdata/names_heldout.tsv", minHeldoutRecall, maxHeldoutFPR},
		{"testdata/names_heldout2.tsv", minFreshRecall, maxFreshFPR},
		{"testdata/names_heldout3.tsv", minHeldout3Recall, maxHeldout3FPR},
	} {
		t.Run(set.file, func(t *testing.T) { evalLabeled(t, l, set.file, set.minRecall, set.maxFPR) })
	}
}

func evalLabeled(t *testing.T, l *List, file string, minLabeledRecall, maxLabeledFPR float64) {
	qs := readLabeled(t, file)
	if len(qs) < 200 {
		t.Fatalf("labeled set has %d queries, want at least 200", len(qs))
	}
	type tally struct{ n, ok int }
	byKind := map[string]*tally{}
	var variants, found, misses, falsePos, topRight, kindRule int
	for _, q := range qs {
		r := l.ScreenName(q.query)
		all := append(slices.Clone(r.Exact), r.Possible...)
		tl := byKind[q.kind]
		if tl == nil {
			tl = &tally{}
			byKind[q.kind] = tl
		}
		tl.n++
		if e, ok := l.Entry(q.uid); ok && q.uid != 0 && nameOnly(e.Type, false) && !writtenAsListed(e, q.query) {
			// A vessel's or aircraft's name changed by the generator (a typo): since issue 34 such names match
			// only as written, so the entry must not come back (the attack; not counted in recall).
			kindRule++
			if slices.ContainsFunc(all, func(m screeningMatch) bool { return m.UID == q.uid }) {
				t.Errorf("%q (%s) matched the %s %q: a %s name matches only as written", q.query, q.kind, e.Type, e.Name, e.Type)
			} else {
				tl.ok++
			}
			continue
		}
		if q.uid != 0 {
			variants++
			hit := slices.ContainsFunc(all, func(m screeningMatch) bool { return m.UID == q.uid })
			if hit {
				found++
				tl.ok++
				if all[0].UID == q.uid {
					topRight++
				}
			} else {
				t.Logf("missed  %-45q (%s) want uid %d %q; got %v", q.query, q.kind, q.uid, q.source, brief(all))
			}
			continue
		}
		misses++
		if len(all) > 0 {
			falsePos++
			t.Logf("matched %-45q (%s, from %q): %v", q.query, q.kind, q.source, brief(all))
		} else {
			tl.ok++
		}
	}
	kinds := make([]string, 0, len(byKind))
	for k := range byKind {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		t.Logf("%-26s %3d/%3d correct", k, byKind[k].ok, byKind[k].n)
		if realWorldKinds[k] && float64(byKind[k].ok) < minKindRecall*float64(byKind[k].n) {
			t.Errorf("%s: %d/%d correct, below the per-kind floor %.2f", k, byKind[k].ok, byKind[k].n, minKindRecall)
		}
	}
	recall := float64(found) / float64(variants)
	fpr := float64(falsePos) / float64(misses)
	t.Logf("recall %d/%d = %.1f%% (entry ranked first in %d); false positives %d/%d = %.1f%%; threshold %.2f; %d vessel/aircraft variants not written as listed, correctly unmatched",
		found, variants, 100*recall, topRight, falsePos, misses, 100*fpr, PossibleThreshold, kindRule)
	if recall < minLabeledRecall {
		t.Errorf("recall %.3f below the floor %.3f", recall, minLabeledRecall)
	}
	if fpr > maxLabeledFPR {
		t.Errorf("false-positive rate %.3f above the ceiling %.3f", fpr, maxLabeledFPR)
	}
}

type screeningMatch = screening.SanctionsMatch

// realWorldKinds are the kinds of testdata/gen_realworld.py, held to minKindRecall each.
var realWorldKinds = map[string]bool{"variant:hispanic": true, "variant:arabic": true, "variant:slavic": true,
	"variant:entity-typo": true, "variant:given-typo": true, "miss:common-person": true}

func brief(ms []screeningMatch) string {
	var b strings.Builder
	for i, m := range ms {
		if i == 3 {
			b.WriteString(" ...")
			break
		}
		b.WriteString(" " + strconv.Itoa(m.UID) + ":" + m.MatchedName + "@" + strconv.FormatFloat(m.Score, 'f', 2, 64))
	}
	return b.String()
}

// Floors for TestLabeledNames (see docs/SCREENING.md for the measured figures). names_heldout2.tsv and
// names_heldout3.tsv were each generated before the matcher changes that followed them (issue 19's second
// pass; issue 34); their misses have since been read, so none of the four sets is clean any more.
const (
	minDevRecall      = 0.995 // measured 403/403 = 100%
	maxDevFPR         = 0.015 // measured 1/178 = 0.6%
	minHeldoutRecall  = 0.995 // measured 400/402 = 99.5%
	maxHeldoutFPR     = 0.025 // measured 2/178 = 1.1%
	minFreshRecall    = 0.995 // measured 402/404 = 99.5%
	maxFreshFPR       = 0.015 // measured 0/178
	minHeldout3Recall = 0.995 // measured 403/404 = 99.8% (first measurement 401/404 = 99.3%)
	maxHeldout3FPR    = 0.015 // measured 1/178 = 0.6%
)

// minKindRecall is the floor of every real-world kind (issue 19) on all four sets: each measured 47/48 or
// more.
const minKindRecall = 0.95

// writtenAsListed reports whether query is one of the entry's names as written (sameAsWritten).
func writtenAsListed(e Entry, query string) bool {
	if sameAsWritten(query, e.Name) {
		return true
	}
	for _, a := range e.Aliases {
		if sameAsWritten(query, a.Name) {
			return true
		}
	}
	return false
}
