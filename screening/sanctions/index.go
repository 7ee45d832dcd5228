package sanctions

import (
	"cmp"
	"hash/maphash"
	"maps"
	"math"
	"slices"
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

// storedUnit is a unit as the index keeps it: its span follows from its place among its name's units, which
// buildNameIndex lays out as each token, then the joined pairs, then (a list name of 3+ tokens) the whole
// name joined; its start is kept apart, a byte (ix.ustart). Read units with unitAt.
type storedUnit struct {
	vocab uint32
	w     float32
}

// nameRec is one indexed name: an entry's primary name (alias -1) or one of its strong aliases, or a form
// derived from one of them (derived; see variants.go).
type nameRec struct {
	entry   int32
	wsum    float32 // total token weight
	u0      uint32  // its units are ix.units[u0 : u0+nu] (unitsOf, unitAt)
	alias   int16
	ntok    uint8
	nlast   uint8 // tokens before the comma of an individual written "LAST, Given" (0: none; see explain)
	nu      uint8
	derived bool // a form people write the name in (variants.go), not the list's own: never exact
}

// unitsOf returns the stored units of name rec (not to be modified): their vocabulary ids and weights.
func (ix *nameIndex) unitsOf(rec *nameRec) []storedUnit {
	a, b := rec.u0, rec.u0+uint32(rec.nu)
	return ix.units[a:b:b]
}

// unitAt returns unit ni of name rec.
func (ix *nameIndex) unitAt(rec *nameRec, ni int) unit {
	k := int(rec.u0) + ni
	u := unit{vocab: ix.units[k].vocab, w: ix.units[k].w, start: ix.ustart[k], span: 2}
	switch {
	case ni < int(rec.ntok):
		u.span = 1
	case !rec.derived && rec.ntok >= 3 && ni == int(rec.nu)-1:
		u.span = rec.ntok
	}
	return u
}

type exactRef struct {
	entry int32
	alias int16
	weak  bool
}

// nameIndex is the name-matching index of a List. It is read-only once built and stored compactly
// (compact.go): strings in arenas found through open-addressing tables, id lists flattened.
type nameIndex struct {
	vocab       strIndex              // the vocabulary: every token, joined pair and whole-name key of a name
	skelOf      []uint32              // per vocabulary string, its skeleton's id in skelIx
	isToken     []bool                // the string occurs as a single token of some name (and so in the typo index)
	idf         []float32             // of the string as a single token; 0 if it never is one
	postings    groups[uint32]        // per vocabulary string, the names with a unit that is it, ascending
	skelIx      strIndex              // the distinct skeletons
	bySkel      groups[uint32]        // per distinct skeleton, the vocabulary strings that have it, ascending
	delKeys     []uint16              // sorted bits 16..31 (from the top) of the hashes of one-deletion variants of tokens
	delVocab    []uint32              // parallel to delKeys
	delStart    []uint32              // delStart[b]: first position in delKeys whose hash's top delBucketBits bits are b
	exactSeed   maphash.Seed          // of exactHash
	exactHash   []uint64              // the hashes of the exact keys (exactKeys), ascending (see exactRefs)
	exact       groups[exactRef]      // parallel to exactHash: the list names with that key
	common      map[uint32][]neighbor // precomputed neighbors of the most frequent tokens
	particleIDs []uint32              // the particles that are tokens of some name (particlePairSim)
	names       []nameRec
	units       []storedUnit // every name's units, name after name (unitsOf, unitAt)
	ustart      []uint8      // parallel to units: the unit's first token
	nameW       []float32    // names[i].wsum, packed for the candidate filter
	unitMaxW    []float32    // per vocabulary string: the largest weight of a name unit that is that string
	maxIDF      float32
}

// str returns vocabulary string id.
func (ix *nameIndex) str(id uint32) string { return ix.vocab.key(id) }

// skel returns the skeleton of vocabulary string id.
func (ix *nameIndex) skel(id uint32) string { return ix.skelIx.key(ix.skelOf[id]) }

// vocabLen is the number of vocabulary strings.
func (ix *nameIndex) vocabLen() int { return ix.vocab.count() }

// lookupID returns the vocabulary id of s.
func (ix *nameIndex) lookupID(s string) (uint32, bool) { return ix.vocab.get(s) }

// withSkeleton returns the vocabulary strings whose skeleton is skel, ascending (not to be modified).
func (ix *nameIndex) withSkeleton(skel string) []uint32 {
	if g, ok := ix.skelIx.get(skel); ok {
		return ix.bySkel.at(g)
	}
	return nil
}

// exactRefs returns the list names whose exact keys include key (not to be modified).
//
// The keys themselves are not kept, only their 64-bit hashes under a seed drawn at each build (a megabyte
// less): another key would be taken for a listed one only if their keyed hashes collided, a chance of
// 52,000 in 2^64 (one in 3·10^14) per key looked up against the full list, which no one can aim at without
// the seed. Such a collision could only add a match (a block or hold), never drop one.
func (ix *nameIndex) exactRefs(key string) []exactRef {
	h := maphash.String(ix.exactSeed, key)
	if k, ok := slices.BinarySearch(ix.exactHash, h); ok {
		return ix.exact.at(uint32(k))
	}
	return nil
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
	ix := &nameIndex{}
	// The build works in maps and separate slices; freeze packs them (compact.go) and they are dropped.
	vocab := map[string]uint32{}
	exact := map[string][]exactRef{}
	var strs, skels []string
	var postings [][]uint32
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
			if !slices.Contains(exact[k], ref) {
				exact[k] = append(exact[k], ref)
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
		if id, ok := vocab[s]; ok {
			return id
		}
		id := uint32(len(strs))
		vocab[s] = id
		strs = append(strs, s)
		skels = append(skels, skeleton(s))
		ix.isToken = append(ix.isToken, false)
		ix.idf = append(ix.idf, 0)
		postings = append(postings, nil)
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
	ix.nameW = make([]float32, 0, len(fuzzy))
	var buf []unit // one name's units
	for _, p := range fuzzy {
		nameID := uint32(len(ix.names))
		rec := nameRec{entry: p.entry, alias: p.alias, ntok: uint8(len(p.toks)), nlast: uint8(p.nlast), derived: p.derived}
		ru := buf[:0] // rec's units
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
			ru = append(ru, unit{vocab: id, start: uint8(i), span: 1, w: w})
		}
		// A derived form has no joined units: people who write the short form write it in words, and the
		// joined strings would be most of what the derived forms cost in memory.
		for i := 0; i+1 < len(p.toks) && !p.derived; i++ {
			if !joinable(p.toks[i], p.toks[i+1]) {
				continue
			}
			id := intern(p.toks[i] + p.toks[i+1])
			ru = append(ru, unit{vocab: id, start: uint8(i), span: 2, w: ru[i].w + ru[i+1].w})
		}
		// A derived form keeps one joined unit: its first two words when the list already has them joined
		// (an individual's two given names, joined in its own name's units): a Persian compound given name
		// is often written as one word, "Mohammadjavad Azari" for AZARI JAHROMI, Mohammad Javad, whose
		// short form "mohammad javad azari" would otherwise not meet it. No new string is interned.
		if p.derived && len(p.toks) >= 3 && joinable(p.toks[0], p.toks[1]) && !particles[p.toks[0]] && !particles[p.toks[1]] {
			if id, ok := vocab[p.toks[0]+p.toks[1]]; ok {
				ru = append(ru, unit{vocab: id, start: 0, span: 2, w: ru[0].w + ru[1].w})
			}
		}
		if len(p.toks) >= 3 && !p.derived {
			id := intern(compactKey(p.toks))
			ru = append(ru, unit{vocab: id, start: 0, span: uint8(len(p.toks)), w: rec.wsum})
		}
		for _, u := range ru {
			for int(u.vocab) >= len(ix.unitMaxW) {
				ix.unitMaxW = append(ix.unitMaxW, 0)
			}
			ix.unitMaxW[u.vocab] = max(ix.unitMaxW[u.vocab], u.w)
			ps := postings[u.vocab]
			if len(ps) == 0 || ps[len(ps)-1] != nameID {
				postings[u.vocab] = append(ps, nameID)
			}
		}
		rec.u0, rec.nu = uint32(len(ix.units)), uint8(len(ru))
		for ni, u := range ru {
			ix.units = append(ix.units, storedUnit{vocab: u.vocab, w: u.w})
			ix.ustart = append(ix.ustart, u.start)
			if ix.unitAt(&rec, ni) != u {
				panic("sanctions: a name's units are not laid out as unitAt reads them") // a bug in this file
			}
		}
		buf = ru
		ix.names = append(ix.names, rec)
		ix.nameW = append(ix.nameW, rec.wsum)
	}
	for len(ix.unitMaxW) < len(strs) {
		ix.unitMaxW = append(ix.unitMaxW, 0) // words of vessel names only: in no name unit
	}
	ix.units = slices.Clip(slices.Clone(ix.units))
	ix.ustart = slices.Clip(slices.Clone(ix.ustart))
	ix.names = slices.Clip(ix.names)
	ix.freeze(strs, skels, postings, exact)
	vocab, strs, skels, postings, exact = nil, nil, nil, nil, nil
	ix.buildDeletions()
	for _, p := range slices.Sorted(maps.Keys(connectors)) {
		if id, ok := ix.lookupID(p); ok && ix.isToken[id] {
			ix.particleIDs = append(ix.particleIDs, id)
		}
	}
	// Frequent tokens (Muhammad, Al, Ahmad, Trading...) recur in most queries and have the longest skeleton
	// buckets; their neighbor lists are computed once here.
	ix.common = map[uint32][]neighbor{}
	for t, d := range df {
		if d >= commonTokenDF {
			id, _ := ix.lookupID(t) // every counted word is interned (list names and vessel names alike)
			ix.common[id] = ix.neighbors(t, ix.skel(id), true)
		}
	}
	return ix
}

// joinable reports whether two adjacent tokens form a joined unit: not when one is a lone initial, whose
// letter would vanish into the other word's skeleton ("juan n" joined is "juann", a spelling of "juan").
func joinable(a, b string) bool { return len(a) > 1 && len(b) > 1 }

// freeze packs the build's maps and lists into the index's compact form (compact.go).
func (ix *nameIndex) freeze(strs, skels []string, postings [][]uint32, exact map[string][]exactRef) {
	ix.vocab = newStrIndex(strs)
	ix.isToken = slices.Clip(ix.isToken)
	ix.idf = slices.Clip(ix.idf)
	ix.unitMaxW = slices.Clip(ix.unitMaxW)
	ix.postings = flatten(postings)
	// Skeletons: each distinct one once, numbered in the order of first use; a vocabulary string's skeleton
	// is its id there.
	skelID := make(map[string]uint32, len(skels)/2)
	var distinct []string
	var members [][]uint32
	ix.skelOf = make([]uint32, len(skels))
	for id, sk := range skels {
		g, ok := skelID[sk]
		if !ok {
			g = uint32(len(distinct))
			skelID[sk] = g
			distinct = append(distinct, sk)
			members = append(members, nil)
		}
		members[g] = append(members[g], uint32(id))
		ix.skelOf[id] = g
	}
	ix.skelIx = newStrIndex(distinct)
	ix.bySkel = flatten(members)
	ix.exactSeed = maphash.MakeSeed()
	byHash := make(map[uint64][]exactRef, len(exact))
	for _, k := range slices.Sorted(maps.Keys(exact)) {
		h := maphash.String(ix.exactSeed, k)
		for _, r := range exact[k] {
			if !slices.Contains(byHash[h], r) {
				byHash[h] = append(byHash[h], r)
			}
		}
	}
	ix.exactHash = slices.Sorted(maps.Keys(byHash))
	refs := make([][]exactRef, len(ix.exactHash))
	for i, h := range ix.exactHash {
		refs[i] = byHash[h]
	}
	ix.exact = flatten(refs)
}

// buildDeletions builds the deletion index: for each token of 4+ bytes, the hashes of it and of each form
// with one byte deleted, sorted, with a bucket table on the hashes' top bits.
func (ix *nameIndex) buildDeletions() {
	n := 0
	for id := range uint32(ix.vocabLen()) {
		if s := ix.str(id); ix.isToken[id] && len(s) >= minDeleteLen {
			n += len(s) + 1
		}
	}
	type del struct {
		h  uint64
		id uint32
	}
	dels := make([]del, 0, n)
	var hs []uint64
	for id := range uint32(ix.vocabLen()) {
		if s := ix.str(id); ix.isToken[id] && len(s) >= minDeleteLen {
			hs = deleteHashes(hs[:0], s)
			for _, h := range hs {
				dels = append(dels, del{h, id})
			}
		}
	}
	slices.SortFunc(dels, func(a, b del) int {
		if a.h != b.h {
			return cmp.Compare(a.h, b.h)
		}
		return cmp.Compare(a.id, b.id)
	})
	// Only bits 16..31 of a hash (from the top) are kept: the top 16 pick the bucket (about three keys
	// each), and two hashes that agree on 32 bits but not on the rest only add a candidate, which neighbors
	// then checks (unitSims) like any other.
	ix.delKeys = make([]uint16, len(dels))
	ix.delVocab = make([]uint32, len(dels))
	for i, d := range dels {
		ix.delKeys[i], ix.delVocab[i] = delKey(d.h), d.id
	}
	// A bucket table on the hashes' top bits turns each lookup's binary search over 200,000 keys (about 18
	// cache misses) into a short scan.
	ix.delStart = make([]uint32, 1<<delBucketBits+1)
	for i, b := 0, 0; b <= 1<<delBucketBits; b++ {
		for i < len(dels) && int(dels[i].h>>(64-delBucketBits)) < b {
			i++
		}
		ix.delStart[b] = uint32(i)
	}
}

const delBucketBits = 16

// delKey is the part of a deletion hash kept in delKeys: the 16 bits after the bucket's.
func delKey(h uint64) uint16 { return uint16(h >> (64 - delBucketBits - 16)) }

// delLookup appends the vocabulary ids whose deletion variants hash to h.
func (ix *nameIndex) delLookup(dst []uint32, h uint64) []uint32 {
	b := h >> (64 - delBucketBits)
	k := delKey(h)
	i, end := int(ix.delStart[b]), int(ix.delStart[b+1])
	for i < end && ix.delKeys[i] < k {
		i++
	}
	for ; i < end && ix.delKeys[i] == k; i++ {
		dst = append(dst, ix.delVocab[i])
	}
	return dst
}
