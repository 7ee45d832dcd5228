package sanctions

import (
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Limits on the token counts the matcher considers: longer names and queries are cut (their masks are
// 64-bit, and no real name needs more).
const (
	maxNameTokens  = 40
	maxQueryTokens = 24
)

// unit is a matchable piece of a name: one token (span 1) or two adjacent tokens joined (span 2), the
// latter so that "TornadoCash" meets "Tornado Cash" and "Abdal" meets "Abd Al".
type unit struct {
	vocab       uint32
	start, span uint8
	w           float32 // IDF weight (the sum of both tokens' weights for a joined pair)
}

// nameRec is one indexed name: an entry's primary name (alias -1) or one of its strong aliases, or a form
// derived from one of them (derived; see variants.go).
type nameRec struct {
	entry   int32
	alias   int16
	ntok    uint8
	nlast   uint8   // tokens before the comma of an individual written "LAST, Given" (0: none; see explain)
	derived bool    // a form people write the name in (variants.go), not the list's own: never exact
	wsum    float32 // total token weight
	units   []unit
}

type exactRef struct {
	entry int32
	alias int16
	weak  bool
}

// nameIndex is the name-matching index of a List.
type nameIndex struct {
	vocab       map[string]uint32
	strs        []string
	skels       []string
	isToken     []bool    // the string occurs as a single token of some name (and so in the typo index)
	idf         []float32 // of the string as a single token; 0 if it never is one
	postings    [][]uint32
	bySkel      map[string][]uint32
	delKeys     []uint64 // sorted hashes of one-deletion variants of tokens
	delVocab    []uint32 // parallel to delKeys
	delStart    []uint32 // delStart[b]: first position in delKeys whose top delBucketBits bits are b
	exact       map[string][]exactRef
	common      map[uint32][]neighbor // precomputed neighbors of the most frequent tokens
	particleIDs []uint32              // the particles that are tokens of some name (particlePairSim)
	names       []nameRec
	nameW       []float32 // names[i].wsum, packed for the candidate filter
	unitMaxW    []float32 // per vocabulary string: the largest weight of a name unit that is that string
	maxIDF      float32
}

// commonTokenDF is the name count from which a token's neighbors are precomputed.
const commonTokenDF = 15

// middleWeight scales the weight of an individual's middle names and patronymics (the given names after the
// first): a payee name often leaves them out, so their absence costs less than a missing surname.
const middleWeight = 0.4

// middleStart returns the index of an individual's first middle-name token in matchTokens(name) order
// ("LAST, First Middle..."), or n when there is none or the split is unclear.
func middleStart(name string, individual bool, n int) int {
	last, given, ok := strings.Cut(name, ",")
	if !individual || !ok {
		return n
	}
	l, g := matchTokens(last), matchTokens(given)
	if len(l)+len(g) != n || len(g) < 2 {
		return n
	}
	// The first given name may be a compound (Abu Yahya, Abd al-Rahman): its words are not middle names.
	return len(l) + len(givenHead(g))
}

func buildNameIndex(entries []Entry) *nameIndex {
	ix := &nameIndex{vocab: map[string]uint32{}, bySkel: map[string][]uint32{}, exact: map[string][]exactRef{}}
	type pending struct {
		entry   int32
		alias   int16
		toks    []string
		middle  int // tokens from this index on are middle names (see middleWeight)
		derived bool
		nlast   int
	}
	var fuzzy, derived []pending
	df := map[string]int{}
	listNames := 0            // names counted in the IDF
	var nameOnlyToks []string // words of vessel and aircraft names
	add := func(ei int, ai int, name string, weak bool) {
		individual := entries[ei].Type == TypeIndividual
		for _, k := range exactKeys(name, individual) {
			ref := exactRef{entry: int32(ei), alias: int16(ai), weak: weak}
			if !slices.Contains(ix.exact[k], ref) {
				ix.exact[k] = append(ix.exact[k], ref)
			}
		}
		if weak {
			return // weak aliases are too loose for fuzzy matching
		}
		toks := matchTokens(name)
		if len(toks) == 0 {
			return
		}
		if len(toks) > maxNameTokens {
			toks = toks[:maxNameTokens]
		}
		listNames++
		seen := map[string]bool{}
		for _, t := range toks {
			if !seen[t] {
				seen[t] = true
				df[t]++
			}
		}
		if nameOnly(entries[ei].Type, false) {
			// A vessel's or aircraft's name matches only as written (evidence.go): its words stay known to
			// the IDF and the vocabulary, so other names weigh as before, but it is not a fuzzy candidate.
			nameOnlyToks = append(nameOnlyToks, toks...)
			return
		}
		nlast := 0
		if last, _, ok := strings.Cut(name, ","); ok && individual {
			if nlast = len(matchTokens(last)); nlast >= len(toks) {
				nlast = 0
			}
		}
		fuzzy = append(fuzzy, pending{int32(ei), int16(ai), toks, middleStart(name, individual, len(toks)), false, nlast})
		if individual {
			for _, f := range derivedForms(name) {
				derived = append(derived, pending{int32(ei), int16(ai), f, len(f), true, 0})
			}
		}
	}
	for i := range entries {
		add(i, -1, entries[i].Name, false)
		for j, a := range entries[i].Aliases {
			if j >= math.MaxInt16 {
				break
			}
			add(i, j, a.Name, a.Weak)
		}
	}

	// IDF counts the list's own names only: a derived form repeats its name's words. A derived form the
	// entry already has (as its own name, or derived from another of its names) is indexed once.
	n := float64(listNames)
	have := make(map[string]bool, len(fuzzy)+len(derived))
	key := func(p pending) string { return strconv.Itoa(int(p.entry)) + " " + strings.Join(p.toks, " ") }
	for _, p := range fuzzy {
		have[key(p)] = true
	}
	for _, p := range derived {
		if k := key(p); !have[k] {
			have[k] = true
			fuzzy = append(fuzzy, p)
		}
	}
	intern := func(s string) uint32 {
		if id, ok := ix.vocab[s]; ok {
			return id
		}
		id := uint32(len(ix.strs))
		ix.vocab[s] = id
		ix.strs = append(ix.strs, s)
		ix.skels = append(ix.skels, skeleton(s))
		ix.isToken = append(ix.isToken, false)
		ix.idf = append(ix.idf, 0)
		ix.postings = append(ix.postings, nil)
		return id
	}
	idfOf := func(t string) float32 { return float32(math.Log(1 + n/float64(max(1, df[t])))) }
	for _, t := range nameOnlyToks {
		id := intern(t)
		ix.isToken[id] = true
		ix.idf[id] = idfOf(t)
		ix.maxIDF = max(ix.maxIDF, ix.idf[id])
	}
	ix.names = make([]nameRec, 0, len(fuzzy))
	for _, p := range fuzzy {
		nameID := uint32(len(ix.names))
		rec := nameRec{entry: p.entry, alias: p.alias, ntok: uint8(len(p.toks)), nlast: uint8(p.nlast), derived: p.derived}
		rec.units = make([]unit, 0, unitCount(len(p.toks), p.derived))
		for i, t := range p.toks {
			id := intern(t)
			w := idfOf(t)
			ix.isToken[id] = true
			ix.idf[id] = w
			ix.maxIDF = max(ix.maxIDF, w)
			if i >= p.middle {
				w *= middleWeight
			}
			if particles[t] {
				w *= particleWeight
			}
			rec.wsum += w
			rec.units = append(rec.units, unit{vocab: id, start: uint8(i), span: 1, w: w})
		}
		// A derived form has no joined units: people who write the short form write it in words, and the
		// joined strings would be most of what the derived forms cost in memory.
		for i := 0; i+1 < len(p.toks) && !p.derived; i++ {
			if !joinable(p.toks[i], p.toks[i+1]) {
				continue
			}
			id := intern(p.toks[i] + p.toks[i+1])
			rec.units = append(rec.units, unit{vocab: id, start: uint8(i), span: 2, w: rec.units[i].w + rec.units[i+1].w})
		}
		// A derived form keeps one joined unit: its first two words when the list already has them joined
		// (an individual's two given names, joined in its own name's units): a Persian compound given name
		// is often written as one word, "Mohammadjavad Azari" for AZARI JAHROMI, Mohammad Javad, whose
		// short form "mohammad javad azari" would otherwise not meet it. No new string is interned.
		if p.derived && len(p.toks) >= 3 && joinable(p.toks[0], p.toks[1]) && !particles[p.toks[0]] && !particles[p.toks[1]] {
			if id, ok := ix.vocab[p.toks[0]+p.toks[1]]; ok {
				rec.units = append(rec.units, unit{vocab: id, start: 0, span: 2, w: rec.units[0].w + rec.units[1].w})
			}
		}
		if len(p.toks) >= 3 && !p.derived {
			id := intern(compactKey(p.toks))
			rec.units = append(rec.units, unit{vocab: id, start: 0, span: uint8(len(p.toks)), w: rec.wsum})
		}
		for _, u := range rec.units {
			for int(u.vocab) >= len(ix.unitMaxW) {
				ix.unitMaxW = append(ix.unitMaxW, 0)
			}
			ix.unitMaxW[u.vocab] = max(ix.unitMaxW[u.vocab], u.w)
			ps := ix.postings[u.vocab]
			if len(ps) == 0 || ps[len(ps)-1] != nameID {
				ix.postings[u.vocab] = append(ps, nameID)
			}
		}
		ix.names = append(ix.names, rec)
		ix.nameW = append(ix.nameW, rec.wsum)
	}
	for len(ix.unitMaxW) < len(ix.strs) {
		ix.unitMaxW = append(ix.unitMaxW, 0) // words of vessel names only: in no name unit
	}
	for id, s := range ix.strs {
		ix.bySkel[ix.skels[id]] = append(ix.bySkel[ix.skels[id]], uint32(id))
		if ix.isToken[id] && len(s) >= minDeleteLen {
			var hs []uint64
			for _, h := range deleteHashes(hs, s) {
				ix.delKeys = append(ix.delKeys, h)
				ix.delVocab = append(ix.delVocab, uint32(id))
			}
		}
	}
	sort.Sort(byDelKey{ix})
	// A bucket table on the hashes' top bits turns each lookup's binary search over 200,000 keys (about 18
	// cache misses) into a short scan.
	ix.delStart = make([]uint32, 1<<delBucketBits+1)
	for i, b := 0, 0; b <= 1<<delBucketBits; b++ {
		for i < len(ix.delKeys) && int(ix.delKeys[i]>>(64-delBucketBits)) < b {
			i++
		}
		ix.delStart[b] = uint32(i)
	}
	for _, p := range slices.Sorted(maps.Keys(connectors)) {
		if id, ok := ix.vocab[p]; ok && ix.isToken[id] {
			ix.particleIDs = append(ix.particleIDs, id)
		}
	}
	// Frequent tokens (Muhammad, Al, Ahmad, Trading...) recur in most queries and have the longest skeleton
	// buckets; their neighbor lists are computed once here.
	ix.common = map[uint32][]neighbor{}
	for t, d := range df {
		if d >= commonTokenDF {
			id := ix.vocab[t] // every counted word is interned (list names and vessel names alike)
			ix.common[id] = ix.neighbors(t, ix.skels[id], true)
		}
	}
	return ix
}

// joinable reports whether two adjacent tokens form a joined unit: not when one is a lone initial, whose
// letter would vanish into the other word's skeleton ("juan n" joined is "juann", a spelling of "juan").
func joinable(a, b string) bool { return len(a) > 1 && len(b) > 1 }

// unitCount is the number of units of a name of n tokens: each token, each adjacent pair joined, and (3+
// tokens) the whole name joined; a derived form has its tokens only.
func unitCount(n int, derived bool) int {
	switch {
	case derived || n == 1:
		return n
	case n == 2:
		return 3
	}
	return 2 * n
}

type byDelKey struct{ ix *nameIndex }

func (b byDelKey) Len() int { return len(b.ix.delKeys) }
func (b byDelKey) Less(i, j int) bool {
	if b.ix.delKeys[i] != b.ix.delKeys[j] {
		return b.ix.delKeys[i] < b.ix.delKeys[j]
	}
	return b.ix.delVocab[i] < b.ix.delVocab[j]
}
func (b byDelKey) Swap(i, j int) {
	b.ix.delKeys[i], b.ix.delKeys[j] = b.ix.delKeys[j], b.ix.delKeys[i]
	b.ix.delVocab[i], b.ix.delVocab[j] = b.ix.delVocab[j], b.ix.delVocab[i]
}

const delBucketBits = 16

// delLookup appends the vocabulary ids whose deletion variants hash to h.
func (ix *nameIndex) delLookup(dst []uint32, h uint64) []uint32 {
	b := h >> (64 - delBucketBits)
	i, end := int(ix.delStart[b]), int(ix.delStart[b+1])
	for i < end && ix.delKeys[i] < h {
		i++
	}
	for ; i < end && ix.delKeys[i] == h; i++ {
		dst = append(dst, ix.delVocab[i])
	}
	return dst
}
