package sanctions

import (
	"math"
	"math/bits"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/payguard/payguard/screening"
)

// PossibleThreshold is the fuzzy score at or above which a name is reported as a possible match. The score
// is in [0, 1]; docs/SCREENING.md explains how it was chosen from the labeled set.
const PossibleThreshold = 0.80

// minTokenSim is the lowest similarity at which two tokens count as the same word. simEpsilon absorbs the
// rounding of Jaro-Winkler: a three-letter word with one letter changed after the first scores exactly 0.8
// on paper and 0.7999999999 in float64.
const (
	minTokenSim = 0.80
	simEpsilon  = 1e-9
)

// skeletonSim is the similarity floor of two tokens of 4+ bytes that share a skeleton (spelling variants).
const skeletonSim = 0.92

// minSkeletonJW is the Jaro-Winkler similarity below which a shared skeleton is taken as a coincidence.
const minSkeletonJW = 0.75

// maxPossible caps the possible matches returned for one query.
const maxPossible = 10

// Score shape: score = cq^queryExp * cn^nameExp, where cq is the share of the query's token weight that
// found a partner in the name and cn the share of the name's weight that did. A query word with no partner
// costs more than a name word with none: a merchant often omits a middle name, but an extra distinctive
// word ("Banco Nacional de Panama" against "Banco Nacional de Cuba") means a different party.
const (
	queryExp = 1.5
	nameExp  = 0.5
)

// typoRelated is the typo relation of two single tokens, query token a and list token b: one edit by the
// deletion relation (deleteRelated), or a three-letter query word that is the four-letter list word with
// one letter left out ("Aia" typed for "Amia"). The second is one-sided: a letter left out is the commonest
// slip, while a four-letter query word is not taken for a three-letter list word ("Lima" is not "Lia").
// Both are pairs the deletion index finds (the list word's deletions include the query word).
func typoRelated(a, b string) bool {
	if deleteRelated(a, b) {
		return true
	}
	return len(a) == minDeleteLen && len(b) == minDeleteLen+1 && letterLeftOut(a, b)
}

// letterLeftOut reports whether a is b with one byte deleted (len(a)+1 == len(b)).
func letterLeftOut(a, b string) bool {
	p := 0
	for p < len(a) && a[p] == b[p] {
		p++
	}
	return a[p:] == b[p+1:]
}

// codeSwap reports whether a and b are three-letter codes of consonants only ("NMX", "CPV") that differ by
// swapping two adjacent letters. Jaro-Winkler cannot see such a swap in three letters (no match window),
// yet in a code with no vowels it is the commonest typo; they score minTokenSim.
func codeSwap(a, b string) bool {
	if len(a) != 3 || len(b) != 3 || a == b || strings.ContainsAny(a, "aeiouy") || strings.ContainsAny(b, "aeiouy") {
		return false
	}
	return a[0] == b[1] && a[1] == b[0] && a[2] == b[2] || a[0] == b[0] && a[1] == b[2] && a[2] == b[1]
}

// particlePairSim is the similarity of two different connectors ("bin" and "al"; see connectors): one stands
// for another as people write a name ("Given bin Family", "Given al-Family"), so a particle may partner
// one of the name's particles instead of costing its weight when the name's other words are so common that
// the particle's share is large ("Ahmed bin Ahmad" for AL-AHMAD, Ahmad). Particles weigh little
// (particleWeight), so the pairing moves a score only by that little.
const particlePairSim = 0.9

// maxJoinedLenDiff bounds the length difference at which a joined unit meets another string by skeleton. A
// word with no consonant after its first letter adds nothing to a skeleton, so without the bound the query
// "comercializadora aia" joined would meet the list's single word "comercializadora" and take both query
// words for it in the alignment.
const maxJoinedLenDiff = 2

func joinedSkelLen(a, b string) bool {
	return len(a)-len(b) <= maxJoinedLenDiff && len(b)-len(a) <= maxJoinedLenDiff
}

// unitSims returns unitSim(a, ska, aTok, b, skb, bTok) and unitSim(a, ska, false, b, skb, false) (the
// similarity when either side is a joined unit) with one Jaro-Winkler computation.
func unitSims(a, ska string, aTok bool, b, skb string, bTok bool) (tok, big float64) {
	if a == b {
		return 1, 1
	}
	if aTok && bTok && connectors[a] && connectors[b] {
		return particlePairSim, 0
	}
	sameSkel := ska == skb
	if !sameSkel && !(aTok && bTok && typoRelated(a, b)) {
		return 0, 0
	}
	jw := jaroWinkler(a, b)
	if jw >= minTokenSim-simEpsilon && sameSkel && joinedSkelLen(a, b) {
		big = jw
	}
	tok = jw
	if sameSkel && aTok && bTok && len(a) >= minSpellingLen && len(b) >= minSpellingLen && jw >= minSkeletonJW {
		tok = max(jw, skeletonSim)
	}
	if aTok && bTok && codeSwap(a, b) {
		tok = max(jw, minTokenSim)
	}
	if tok < minTokenSim-simEpsilon {
		tok = 0
	}
	return tok, big
}

// qunit is one unit of the query.
type qunit struct {
	s, skel     string
	start, span uint8
	w           float32
}

// qmatch says that query unit q meets vocabulary string vocab with similarity tok (when the name's unit is
// a single token) or big (when it is a joined pair).
type qmatch struct {
	q        uint8
	tok, big float32
}

type query struct {
	toks  []string
	units []qunit
	wsum  float32
	// matches lists, in the order found, each vocabulary string some query unit meets with those units;
	// pos maps a vocabulary id to its place in matches. A slice rather than a map alone: the pruning and
	// scoring loops walk it several times per query, and walking a map cost more than the work inside.
	matches []vocabMatch
	pos     map[uint32]int32
}

// vocabMatch is one vocabulary string and the query units that meet it.
type vocabMatch struct {
	id uint32
	ms []qmatch
}

// get returns the query units that meet vocabulary string id.
func (q *query) get(id uint32) []qmatch {
	if i, ok := q.pos[id]; ok {
		return q.matches[i].ms
	}
	return nil
}

// add records that a query unit meets vocabulary string id, reusing the slices of a pooled query.
func (q *query) add(id uint32, m qmatch) {
	if i, ok := q.pos[id]; ok {
		q.matches[i].ms = append(q.matches[i].ms, m)
		return
	}
	q.pos[id] = int32(len(q.matches))
	if len(q.matches) < cap(q.matches) {
		q.matches = q.matches[:len(q.matches)+1]
		e := &q.matches[len(q.matches)-1]
		e.id, e.ms = id, append(e.ms[:0], m)
		return
	}
	q.matches = append(q.matches, vocabMatch{id: id, ms: []qmatch{m}})
}

// prepare builds a query from normalized tokens, finds through the index every vocabulary string that
// any query unit can meet, and weighs the query's tokens.
func (ix *nameIndex) prepare(toks []string) *query {
	q := newQuery(toks)
	ix.lookup(q)
	ix.weigh(q)
	return q
}

// queryPool recycles queries: their match map and lists were most of the bytes a ScreenName call allocated.
var queryPool = sync.Pool{New: func() any { return &query{pos: make(map[uint32]int32, 64)} }}

// maxPooledMatches keeps the maps of common-word queries (thousands of matches) out of the pool: clearing
// a map costs its capacity, which every later small query would pay.
const maxPooledMatches = 512

func newQuery(toks []string) *query {
	if len(toks) > maxQueryTokens {
		toks = toks[:maxQueryTokens]
	}
	q := queryPool.Get().(*query)
	q.toks, q.units, q.wsum = toks, q.units[:0], 0
	for i, t := range toks {
		q.units = append(q.units, qunit{s: t, skel: skeleton(t), start: uint8(i), span: 1})
	}
	for i := 0; i+1 < len(toks); i++ {
		if !joinable(toks[i], toks[i+1]) {
			continue
		}
		s := toks[i] + toks[i+1]
		q.units = append(q.units, qunit{s: s, skel: skeleton(s), start: uint8(i), span: 2})
	}
	if len(toks) >= 3 {
		s := compactKey(toks)
		q.units = append(q.units, qunit{s: s, skel: skeleton(s), start: 0, span: uint8(len(toks))})
	}
	return q
}

// release returns q to the pool; q must not be used afterwards.
func (q *query) release() {
	if len(q.matches) > maxPooledMatches {
		return
	}
	clear(q.pos)
	q.matches = q.matches[:0]
	q.toks = nil
	queryPool.Put(q)
}

// neighbor is a vocabulary string a unit meets, with both similarities (see qmatch).
type neighbor struct {
	id       uint32
	tok, big float32
}

// neighbors returns the vocabulary strings a query unit (string s, skeleton skel, single token or joined)
// meets: by equality, by skeleton, and (single tokens of 4+ bytes) through the deletion index. The
// list's most frequent tokens have theirs precomputed (ix.common).
func (ix *nameIndex) neighbors(s, skel string, single bool) []neighbor {
	if single {
		if id, ok := ix.lookupID(s); ok {
			if ns, ok := ix.common[id]; ok {
				return ns
			}
		}
	}
	var cand []uint32
	if id, ok := ix.lookupID(s); ok {
		cand = append(cand, id)
	}
	cand = append(cand, ix.withSkeleton(skel)...)
	if single && connectors[s] {
		cand = append(cand, ix.particleIDs...)
	}
	if single && len(s) >= minDeleteLen {
		var hs [48]uint64
		for _, h := range deleteHashes(hs[:0], s) {
			cand = ix.delLookup(cand, h)
		}
	}
	slices.Sort(cand)
	var out []neighbor
	for _, id := range slices.Compact(cand) {
		tok, big := unitSims(s, skel, single, ix.str(id), ix.skel(id), ix.isToken[id])
		if tok != 0 || big != 0 {
			out = append(out, neighbor{id: id, tok: float32(tok), big: float32(big)})
		}
	}
	return out
}

// lookup finds the vocabulary strings each query unit meets: by equality, by skeleton, and (single tokens
// of 4+ bytes) through the deletion index.
func (ix *nameIndex) lookup(q *query) {
	for qi := range q.units {
		u := &q.units[qi]
		for _, n := range ix.neighbors(u.s, u.skel, u.span == 1) {
			q.add(n.id, qmatch{q: uint8(qi), tok: n.tok, big: n.big})
		}
	}
}

// longQueryTokens is the query length from which every one- and two-letter word is capped at the mean
// weight of the other words (see weigh).
const longQueryTokens = 5

// weigh sets the query's token weights: the token's own IDF when the list knows it as a token, else the IDF
// of the most similar token it meets, else the highest IDF (an unknown word is a distinctive word).
func (ix *nameIndex) weigh(q *query) {
	q.wsum = 0
	var short uint64 // unknown one- and two-letter tokens that meet no token of the list
	var legal uint64 // of those, an unknown last word one edit from a legal form (see legalFormTypo)
	for qi := range q.units {
		u := &q.units[qi]
		if u.span != 1 {
			continue
		}
		u.w = ix.maxIDF
		if particles[u.s] {
			// A particle weighs little whether or not the list knows it (see particleWeight).
			u.w = ix.maxIDF * particleWeight
			if id, ok := ix.lookupID(u.s); ok && ix.isToken[id] {
				u.w = ix.idf[id] * particleWeight
			}
		} else if id, ok := ix.lookupID(u.s); ok && ix.isToken[id] {
			u.w = ix.idf[id]
		} else {
			best, bestID := float32(0), uint32(0)
			for _, vm := range q.matches {
				id, ms := vm.id, vm.ms
				for _, m := range ms {
					// Ties go to the lower id, so the weight does not depend on map order.
					if int(m.q) == qi && ix.isToken[id] && m.tok > 0 && (m.tok > best || m.tok == best && id < bestID) {
						best, bestID, u.w = m.tok, id, ix.idf[id]
					}
				}
			}
			if best == 0 && len(u.s) < minDeleteLen {
				short |= 1 << qi
				continue
			}
			if qi == len(q.toks)-1 && legalFormTypo(u.s) {
				short |= 1 << qi
				legal |= 1 << qi
				continue
			}
		}
		if len(u.s) < minDeleteLen && len(q.toks) >= longQueryTokens {
			short |= 1 << qi
			continue
		}
		q.wsum += u.w
	}
	// A last word the list does not know that is one slip from a legal form ("Global Relief Foundation
	// Incc", "Khan & Schirindel Gmhb") is that form mistyped, not a distinctive word: it weighs like a
	// particle (at most the mean of the other words, times particleWeight), so it no longer sinks the
	// score. Only the last word, and only unknown ones: a word of names the list has ("Corn", "Spar") keeps
	// its weight.
	// A word of one or two letters that is unknown to the list, or any such word in a long query, tells
	// little about identity (no typo of it can be told from another word: "Og" for "Of" in a long name),
	// so it weighs at most what the query's other words weigh on average, not the highest IDF. With no
	// other word it keeps its weight.
	if short != 0 {
		n := len(q.toks) - bits.OnesCount64(short)
		mean := q.wsum / float32(max(1, n))
		for qi := range q.toks {
			if short&(1<<qi) != 0 {
				u := &q.units[qi]
				if n > 0 {
					u.w = min(u.w, mean)
				}
				if legal&(1<<qi) != 0 {
					u.w *= particleWeight
				}
				q.wsum += u.w
			}
		}
	}
	for qi := range q.units {
		if u := &q.units[qi]; u.span > 1 {
			u.w = 0
			for k := u.start; k < u.start+u.span; k++ {
				u.w += q.units[k].w
			}
		}
	}
}

// pair is a candidate alignment of query unit q with name unit n.
type pair struct {
	q, n uint8
	used bool // taken by the alignment (set by score)
	sim  float32
	gain float32
}

// score aligns a query with one name: greedily, best pairs first, each query token and each name token used
// at most once. The pairs come from matchesOf, which gives q.get(vocab) (the query units that meet a
// vocabulary string).
//
// score = avgSim * cq^queryExp * cn^nameExp, where cq and cn are the shares of the query's and the name's
// token weight that found a partner, and avgSim is the weighted mean similarity of the partners.
func (ix *nameIndex) score(q *query, rec *nameRec, pairs []pair, matchesOf func(vocab uint32) []qmatch) (float64, []pair) {
	pairs = pairs[:0]
	if q.wsum == 0 || rec.wsum == 0 {
		return 0, pairs
	}
	var reach float32 // an upper bound on the name weight the alignment can cover
	for ni := range int(rec.nu) {
		u := ix.unitAt(rec, ni)
		ms := matchesOf(u.vocab)
		if len(ms) > 0 {
			reach += u.w
		}
		for _, m := range ms {
			s := m.big
			if u.span == 1 && q.units[m.q].span == 1 {
				s = m.tok
			}
			if s == 0 {
				continue
			}
			gain := s * (q.units[m.q].w/q.wsum + u.w/rec.wsum)
			pairs = append(pairs, pair{q: m.q, n: uint8(ni), sim: s, gain: gain})
		}
	}
	if math.Pow(min(1, float64(reach/rec.wsum)), nameExp) < PossibleThreshold {
		return 0, pairs // cannot reach the threshold: skip the alignment
	}
	// Insertion sort: a handful of pairs, and no allocation.
	for i := 1; i < len(pairs); i++ {
		for j := i; j > 0 && pairBefore(pairs[j], pairs[j-1]); j-- {
			pairs[j], pairs[j-1] = pairs[j-1], pairs[j]
		}
	}
	var qmask, nmask uint64
	var cq, cn, simSum, simW float32
	for i := range pairs {
		p := &pairs[i]
		qu, nu := &q.units[p.q], ix.unitAt(rec, int(p.n))
		qm := spanMask(qu.start, qu.span)
		nm := spanMask(nu.start, nu.span)
		if qmask&qm != 0 || nmask&nm != 0 {
			continue
		}
		p.used = true
		qmask |= qm
		nmask |= nm
		cq += qu.w
		cn += nu.w
		w := qu.w/q.wsum + nu.w/rec.wsum
		simSum += p.sim * w
		simW += w
	}
	if simW == 0 {
		return 0, pairs
	}
	fq := min(1, float64(cq/q.wsum))
	fn := min(1, float64(cn/rec.wsum))
	return float64(simSum/simW) * math.Pow(fq, queryExp) * math.Pow(fn, nameExp), pairs
}

func pairBefore(a, b pair) bool {
	if a.gain != b.gain {
		return a.gain > b.gain
	}
	if a.q != b.q {
		return a.q < b.q
	}
	return a.n < b.n
}

func spanMask(start, span uint8) uint64 { return ((uint64(1) << span) - 1) << start }

func sortScored(out []scored) {
	sort.Slice(out, func(i, j int) bool {
		if out[i].score != out[j].score {
			return out[i].score > out[j].score
		}
		return out[i].name < out[j].name
	})
}

// ScreenName screens a name against the primary names and aliases of the list.
//
// Exact: the normalized name (see NormalizeName; tokens joined with no separator, and for individuals also
// in "First LAST" order) equals that of a primary name or strong alias of an individual or entity, with the
// same legal form, or with a legal form on one side only when the name is not short (minExactLen). Every
// other key match is possible: different legal forms, a short name with a legal form on one side only, a
// name glued to its legal form. A vessel's or aircraft's name or a weak alias matches only when equal as
// written (sameAsWritten), and then as possible. Fuzzy: a score of at least PossibleThreshold, and for a
// short query the stronger evidence of shortNameEvidence. An entry appears once, under its best match, and
// every match carries the steps it needed (evidence.go).
func (l *List) ScreenName(name string) screening.NameResult {
	var res screening.NameResult
	if l == nil || l.names == nil {
		return res
	}
	ix := l.names
	raw := rawTokens(name)
	qToks, qForms := splitLegal(slices.Clone(raw), true)
	keys, glued := keysOf(name, raw, qToks, true)
	// A name with a legal form is a company's: it is not a listed person (OFAC FAQ 5, step 2), so it meets
	// an individual's name by key as possible at most, and never fuzzily (unless the person's name has the
	// same words).
	qSet := legalSet(qForms)
	company := len(qSet) > 0
	// Key matches: the strongest finding per entry (exact over possible), in the order found.
	type keyHit struct {
		m     screening.SanctionsMatch
		exact bool
	}
	var hits []keyHit
	at := map[int32]int{}
	record := func(entry int32, m screening.SanctionsMatch, exact bool) {
		if i, ok := at[entry]; ok {
			if exact && !hits[i].exact {
				hits[i] = keyHit{m, exact}
			}
			return
		}
		at[entry] = len(hits)
		hits = append(hits, keyHit{m, exact})
	}
	for _, key := range keys {
		for _, ref := range ix.exactRefs(key) {
			e := &l.entries[ref.entry]
			listed := l.listedName(ref.entry, ref.alias)
			if nameOnly(e.Type, ref.weak) {
				if !sameAsWritten(name, listed) {
					continue
				}
				var bits uint16
				if ref.weak {
					bits = stepWeak
				}
				record(ref.entry, l.match(ref.entry, ref.alias, 1, bits), false)
				continue
			}
			nSet, nTok := l.facts.of(ref.entry, ref.alias)
			bits := exactSteps(qToks, qSet, nSet, nTok)
			exact := bits&stepLegalDifferent == 0 && (bits&stepLegalRemoved == 0 || informativeLen(qToks) >= minExactLen) &&
				!(company && e.Type == TypeIndividual && bits&stepLegalRemoved != 0)
			record(ref.entry, l.match(ref.entry, ref.alias, 1, bits), exact)
		}
	}
	// A name glued to its legal form: possible, never exact (see gluedLegalKeys).
	for _, key := range glued {
		for _, ref := range ix.exactRefs(key) {
			if e := &l.entries[ref.entry]; !nameOnly(e.Type, ref.weak) {
				nSet, _ := l.facts.of(ref.entry, ref.alias)
				record(ref.entry, l.match(ref.entry, ref.alias, 1, stepGlued|legalSteps(qSet, nSet)), false)
			}
		}
	}
	for _, h := range hits {
		if h.exact {
			res.Exact = append(res.Exact, h.m)
		} else {
			res.Possible = append(res.Possible, h.m)
		}
	}
	toks := abdRewrite(slices.Clone(qToks)) // matchTokens(name), without tokenizing it again
	if len(toks) == 0 {
		return res
	}
	q := ix.prepare(toks)
	defer q.release()
	for _, s := range ix.fuzzy(q) {
		rec := &ix.names[s.name]
		if _, done := at[rec.entry]; done {
			continue // an entry appears once, under its best match
		}
		nSet, _ := l.facts.of(rec.entry, rec.alias)
		legal := legalSteps(qSet, nSet)
		// A company is not a person, unless the person's name has the same "form" words (AG ALBACHAR,
		// Ahmed: a Tuareg "ag", son of, not an Aktiengesellschaft).
		if company && legal != 0 && l.entries[rec.entry].Type == TypeIndividual {
			continue
		}
		bits, ev := ix.explain(q, rec)
		if !shortNameEvidence(ev, l.entries[rec.entry].Type, company && legal == 0) {
			continue
		}
		at[rec.entry] = -1
		bits |= legal
		res.Possible = append(res.Possible, l.match(rec.entry, rec.alias, s.score, bits))
		if len(res.Possible) >= maxPossible {
			break
		}
	}
	return res
}

// listedName is the entry's primary name (alias -1) or the alias.
func (l *List) listedName(entry int32, alias int16) string {
	e := &l.entries[entry]
	if alias >= 0 {
		return e.Aliases[alias].Name
	}
	return e.Name
}

func (l *List) match(entry int32, alias int16, score float64, steps uint16) screening.SanctionsMatch {
	e := &l.entries[entry]
	return screening.SanctionsMatch{
		UID: e.UID, Name: e.Name, MatchedName: l.listedName(entry, alias), Type: e.Type, Programs: e.Programs,
		Score: math.Round(score*1000) / 1000, Steps: stepList(steps),
	}
}
