package sanctions

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/payguard/payguard/internal/realdata"
)

// ofacDataDir is the real OFAC data kept in the repository's testdata/ofac (decompressed by realdata). It
// fails (never skips) when the data is missing, because these tests are the evidence that the loader
// handles the real files.
func ofacDataDir(t testing.TB) string {
	t.Helper()
	return realdata.OFACDir(t)
}

var (
	fullListOnce sync.Once
	fullList     *List
	fullListErr  error
)

// loadFullList is the benchmark list: sdn.csv of 2024-05-03 with the 2025-12 alt.csv joined by uid (rows
// whose uid is not in that sdn.csv are dropped), loaded once per test binary.
func loadFullList(t testing.TB) *List {
	t.Helper()
	dir := ofacDataDir(t)
	fullListOnce.Do(func() {
		sdn, err := os.Open(filepath.Join(dir, "sdn_csv_2024-05-03", "sdn.csv"))
		if err != nil {
			fullListErr = err
			return
		}
		defer sdn.Close()
		alt, err := os.Open(filepath.Join(dir, "alt_add_comments_2025-12", "alt.csv"))
		if err != nil {
			fullListErr = err
			return
		}
		defer alt.Close()
		fullList, _, fullListErr = ParseCSV(CSVFiles{SDN: sdn, Alt: alt}, modTime(sdn), "test")
	})
	if fullListErr != nil {
		t.Fatalf("loading the full list: %v", fullListErr)
	}
	return fullList
}

// unitSim is the similarity of a query unit and a name unit, given their skeletons and whether each is a
// single token (joined pairs match only exactly or by skeleton). It is 0 unless the two are equal, share a
// skeleton, or (both single tokens of 4+ bytes) are within one edit by the deletion relation: exactly the
// pairs the index can find, which is what makes candidate pruning lossless.
func unitSim(a, ska string, aTok bool, b, skb string, bTok bool) float64 {
	if a == b {
		return 1
	}
	if aTok && bTok && connectors[a] && connectors[b] {
		return particlePairSim
	}
	sameSkel := ska == skb
	if !sameSkel && !(aTok && bTok && typoRelated(a, b)) {
		return 0
	}
	jw := jaroWinkler(a, b)
	// Spelling variants (same skeleton) of single words score at least skeletonSim, provided the letters
	// still look alike; joined words and short words get no such floor, since their skeletons collide.
	if sameSkel && aTok && bTok && len(a) >= minSpellingLen && len(b) >= minSpellingLen && jw >= minSkeletonJW {
		jw = max(jw, skeletonSim)
	}
	if aTok && bTok && codeSwap(a, b) {
		jw = max(jw, minTokenSim)
	}
	if !(aTok && bTok) && !joinedSkelLen(a, b) {
		return 0
	}
	if jw < minTokenSim-simEpsilon {
		return 0
	}
	return jw
}

// addMatch records that query unit qi meets vocabulary string id, if it does.
func (ix *nameIndex) addMatch(q *query, qi int, id uint32) {
	if ms := q.get(id); len(ms) > 0 && ms[len(ms)-1].q == uint8(qi) {
		return // already seen for this unit
	}
	u := &q.units[qi]
	tok, big := unitSims(u.s, u.skel, u.span == 1, ix.str(id), ix.skel(id), ix.isToken[id])
	if tok == 0 && big == 0 {
		return
	}
	q.add(id, qmatch{q: uint8(qi), tok: float32(tok), big: float32(big)})
}

// NormalizeName returns the normalized form of a name as space-separated tokens (for display and tests).
func NormalizeName(s string) string { return strings.Join(nameTokens(s), " ") }

// deleteRelatedSlow is the definition of deleteRelated, for tests.
func deleteRelatedSlow(a, b string) bool {
	if len(a) < minDeleteLen || len(b) < minDeleteLen || min(len(a), len(b)) < minSpellingLen && len(a) != len(b) {
		return false
	}
	for i := -1; i < len(a); i++ {
		da := deleteAt(a, i)
		for j := -1; j < len(b); j++ {
			if da == deleteAt(b, j) {
				return true
			}
		}
	}
	return false
}

// deleteAt returns s without byte i (i = -1: s itself).
func deleteAt(s string, i int) string {
	if i < 0 {
		return s
	}
	return s[:i] + s[i+1:]
}
