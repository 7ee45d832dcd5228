package sanctions

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// exhaustiveMatches fills q.matches by comparing every query unit with every vocabulary string, without
// the index: the reference the index lookups must equal.
func (ix *nameIndex) exhaustiveMatches(q *query) {
	for qi := range q.units {
		u := &q.units[qi]
		for id := range uint32(ix.vocabLen()) {
			s := ix.str(id)
			// The cheap necessary condition first (unitSim is 0 otherwise); addMatch decides.
			if s == u.s || ix.skel(id) == u.skel || u.span == 1 && ix.isToken[id] && (typoRelated(u.s, s) || connectors[u.s] && connectors[s]) {
				ix.addMatch(q, qi, id)
			}
		}
	}
}

// exhaustiveSearch scores every name of the list (no candidate pruning) and returns those at or above the
// threshold, best first.
func (ix *nameIndex) exhaustiveSearch(q *query) []scored {
	var out []scored
	var pairs []pair
	met := make([]bool, ix.vocabLen())
	for _, vm := range q.matches {
		met[vm.id] = true
	}
	for n := range ix.names {
		rec := &ix.names[n]
		any := false
		for _, u := range ix.unitsOf(rec) {
			if met[u.vocab] {
				any = true
				break
			}
		}
		if !any {
			continue // no unit meets the query: score 0
		}
		var s float64
		s, pairs = ix.score(q, rec, pairs, q.get)
		if s >= PossibleThreshold {
			out = append(out, scored{name: uint32(n), score: s})
		}
	}
	sortScored(out)
	return out
}

var translitSwaps = map[string]string{
	"muhammad": "mohammed", "mohammed": "muhammad", "mohammad": "mohamed", "mohamed": "mohammad",
	"ahmad": "ahmed", "ahmed": "ahmad", "usama": "osama", "osama": "usama", "abdul": "abdel", "abdel": "abdul",
	"husayn": "hussein", "hussein": "husayn", "ali": "aly", "vladimir": "wladimir", "sergey": "sergei",
	"aleksandr": "alexander", "hasan": "hassan", "hassan": "hasan", "khalid": "khaled", "yusuf": "youssef",
}

// perturb returns the realistic variants of a normalized name: drop a middle token, reverse the order, a
// one-character typo, a transliteration change (or o/u, e/i vowel swap when no known variant applies) and
// the first two tokens joined.
func perturb(toks []string) map[string]string {
	out := map[string]string{}
	join := func(ts []string) string { return strings.Join(ts, " ") }
	if len(toks) >= 3 {
		out["drop-middle"] = join(slices.Delete(slices.Clone(toks), len(toks)/2, len(toks)/2+1))
	}
	if len(toks) >= 2 {
		rev := slices.Clone(toks)
		slices.Reverse(rev)
		out["swap"] = join(rev)
		out["join"] = join(append([]string{toks[0] + toks[1]}, toks[2:]...))
	}
	longest := 0
	for i, t := range toks {
		if len(t) > len(toks[longest]) {
			longest = i
		}
	}
	if t := toks[longest]; len(t) >= 3 {
		b := []byte(t)
		m := len(b) / 2
		b[m] = 'a' + (b[m]-'a'+1)%26
		ts := slices.Clone(toks)
		ts[longest] = string(b)
		out["typo"] = join(ts)
	}
	ts := slices.Clone(toks)
	changed := false
	for i, t := range ts {
		if v, ok := translitSwaps[t]; ok {
			ts[i], changed = v, true
			break
		}
	}
	if !changed {
		for i, t := range ts {
			if r := strings.NewReplacer("o", "u", "u", "o", "e", "i", "i", "e").Replace(t); r != t && len(t) >= 4 {
				ts[i], changed = r, true
				break
			}
		}
	}
	if changed {
		out["translit"] = join(ts)
	}
	// The real-world forms of issue 19 (docs/SCREENING.md "Derived forms"): a short form of the first and
	// last words, a nasab particle inserted, Slavic romanization changes, a three-letter word misspelled, a
	// short first word misspelled, a surname written as its initial, Abdul for Abd al, a misspelled legal
	// form appended and an unknown two-letter word inserted.
	if len(toks) >= 3 {
		out["short-form"] = join([]string{toks[0], toks[len(toks)-1]})
	}
	if len(toks) >= 2 {
		out["particle"] = join(append([]string{toks[0], "bin"}, toks[1:]...))
	}
	for i, t := range toks {
		r := strings.NewReplacer("kh", "h", "zh", "j", "v", "w").Replace(t)
		if strings.HasSuffix(t, "ov") || strings.HasSuffix(t, "ev") {
			r = t + "f"
			r = r[:len(r)-2] + "ff"
		}
		if r != t {
			ts := slices.Clone(toks)
			ts[i] = r
			out["romanize"] = join(ts)
			break
		}
	}
	for i, t := range toks {
		if len(t) == 3 {
			ts := slices.Clone(toks)
			ts[i] = t[:2] + string('a'+(t[2]-'a'+1)%26)
			out["short-typo"] = join(ts)
			break
		}
	}
	for i, t := range toks {
		r := t
		switch {
		case strings.HasSuffix(t, "iy"):
			r = t[:len(t)-2] + "ij"
		case strings.HasPrefix(t, "yu"):
			r = "ju" + t[2:]
		case strings.Contains(t, "ks"):
			r = strings.Replace(t, "ks", "x", 1)
		}
		if r != t {
			ts := slices.Clone(toks)
			ts[i] = r
			out["romanize-2"] = join(ts)
			break
		}
	}
	// A short first word (3-6 letters, usually the given name of a derived form) with one vowel after its
	// first letter changed: gen_realworld.py's given-typo kind.
	if t := toks[0]; len(t) >= 3 && len(t) <= 6 {
		for i := 1; i < len(t); i++ {
			if v := strings.IndexByte("aeiou", t[i]); v >= 0 {
				ts := slices.Clone(toks)
				ts[0] = t[:i] + "eioua"[v:v+1] + t[i+1:]
				out["given-typo"] = join(ts)
				break
			}
		}
	}
	// Given P. MATERNAL: the first word, the initial of the second-to-last word, the last word (the
	// two-surname form with the paternal surname as an initial).
	if len(toks) >= 3 {
		out["initial"] = join([]string{toks[0], toks[len(toks)-2][:1], toks[len(toks)-1]})
	}
	// Abd al-X written Abdul X: the query-side abd-al rewrite of matchTokens.
	for i := 0; i+2 < len(toks); i++ {
		if toks[i] == "abd" && toks[i+1] == "al" {
			out["abd-article"] = join(slices.Concat(toks[:i], []string{"abdul"}, toks[i+2:]))
			break
		}
	}
	// The typing slips of issue 19's second pass (typo_forms_test.go): a four-letter word with an inner
	// letter left out, two letters of a three-letter word swapped (a consonant code: the codeSwap rule), the
	// name glued to a legal form, and a vowel-only word after the first (the joined-unit length bound).
	for i, t := range toks {
		if len(t) == 4 {
			ts := slices.Clone(toks)
			ts[i] = t[:1] + t[2:]
			out["letter-left-out"] = join(ts)
			break
		}
	}
	for i, t := range toks {
		if len(t) == 3 && t[0] != t[1] {
			ts := slices.Clone(toks)
			ts[i] = t[1:2] + t[:1] + t[2:]
			out["code-swap"] = join(ts)
			break
		}
	}
	out["glued-legal"] = strings.Join(toks, "") + "ag limited"
	if len(toks) >= 2 {
		out["vowel-word"] = join(slices.Insert(slices.Clone(toks), 1, "aia"))
	}
	out["legal-typo"] = join(append(slices.Clone(toks), "limtied"))
	if len(toks) >= 4 {
		out["short-word"] = join(slices.Insert(slices.Clone(toks), 2, "xq")) // an unknown two-letter word
	}
	return out
}

// TestPruningIsLossless checks, for a deterministic sample of the list's names (primary names, aliases and
// the derived forms of variants.go) and up to nineteen perturbations of each (including the real-world forms:
// short form, nasab particle, two Slavic romanization changes, three-letter typo, a vowel changed in a short
// first word, a surname initial, Abdul for Abd al, misspelled legal form, an unknown two-letter word, a letter
// left out of a four-letter word, a three-letter word's first two letters swapped, the name glued to a legal
// form, a vowel-only word inserted), that the indexed search returns exactly what an exhaustive scan returns:
// the same vocabulary matches for every query unit and the same names with the same scores.
//
// Sample: every k-th name in index order, k chosen for the run's budget (the exhaustive scan costs about
// 10 ms per query on a busy 2-core machine): 300 names normally, 20 under -race, 60 with -short.
// PAYGUARD_SANCTIONS_EXHAUSTIVE=N runs N names, =all every name (docs/SCREENING.md records such runs).
func TestPruningIsLossless(t *testing.T) {
	l := loadFullList(t)
	ix := l.names
	want := 300
	env := os.Getenv("PAYGUARD_SANCTIONS_EXHAUSTIVE")
	switch n, err := strconv.Atoi(env); {
	case env == "all":
		want = len(ix.names)
	case err == nil && n > 0:
		want = n
	case testing.Short():
		want = 60
	case raceEnabled:
		want = 20
	}
	stride := max(1, len(ix.names)/want)
	start := time.Now()
	queries, hits, derived := 0, 0, 0
	perKind := map[string]int{}
	for n := 0; n < len(ix.names); n += stride {
		rec := &ix.names[n]
		if rec.derived {
			derived++
		}
		toks := make([]string, 0, rec.ntok)
		for ni := range int(rec.nu) {
			if u := ix.unitAt(rec, ni); u.span == 1 {
				toks = append(toks, ix.str(u.vocab))
			}
		}
		variants := perturb(toks)
		variants["original"] = strings.Join(toks, " ")
		for _, kind := range slices.Sorted(maps.Keys(variants)) {
			qtoks := matchTokens(variants[kind])
			if len(qtoks) == 0 {
				continue
			}
			queries++
			perKind[kind]++
			pruned := ix.prepare(qtoks)
			full := newQuery(qtoks)
			ix.exhaustiveMatches(full)
			ix.weigh(full)
			if !sameMatches(pruned, full) {
				t.Fatalf("name %d %q, %s %q: index lookups differ from the exhaustive comparison", n, variants["original"], kind, variants[kind])
			}
			got, exp := ix.fuzzy(pruned), ix.exhaustiveSearch(full)
			if fmt.Sprint(got) != fmt.Sprint(exp) {
				t.Fatalf("name %d, %s %q: pruned search %v, full scan %v", n, kind, variants[kind], got, exp)
			}
			if len(exp) > 0 {
				hits++
			}
		}
	}
	t.Logf("%d names (every %d-th of %d, %d of them derived forms), %d queries, %d with a match above the threshold; identical results; %v",
		len(ix.names)/stride, stride, len(ix.names), derived, queries, hits, time.Since(start).Round(time.Millisecond))
	t.Logf("queries per kind: %v", perKind)
	if derived == 0 {
		t.Error("the sample holds no derived form: the comparison says nothing about them")
	}
	if hits < queries/2 {
		t.Errorf("only %d of %d perturbed queries matched anything: the comparison proves little", hits, queries)
	}
}

func sameMatches(a, b *query) bool {
	if len(a.matches) != len(b.matches) {
		return false
	}
	for _, vm := range a.matches {
		ma, mb := vm.ms, b.get(vm.id)
		ka := slices.SortedFunc(slices.Values(ma), cmpMatch)
		kb := slices.SortedFunc(slices.Values(mb), cmpMatch)
		if !slices.Equal(ka, kb) {
			return false
		}
	}
	return true
}

func cmpMatch(x, y qmatch) int { return int(x.q) - int(y.q) }
