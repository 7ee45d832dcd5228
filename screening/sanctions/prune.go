package sanctions

import (
	"math"
	"slices"
	"sort"
	"sync"
)

// Candidate pruning is lossless because score <= cq^queryExp (avgSim and cn are at most 1):
//   - a name that meets none of the query's "required" tokens (the heaviest ones, taken until the rest
//     weigh too little to reach the threshold) cannot reach it;
//   - a name that misses one "essential" token (one whose absence alone caps cq below the threshold)
//     cannot reach it either; when there are essential tokens, candidates are the names meeting all of them.

// requiredTokens returns the mask of the heaviest query tokens of which a name must meet at least one.
func (q *query) requiredTokens() uint64 {
	idx := make([]int, 0, len(q.toks))
	for i := range q.toks {
		idx = append(idx, i)
	}
	sort.SliceStable(idx, func(a, b int) bool { return q.units[idx[a]].w > q.units[idx[b]].w })
	var mask uint64
	rest := q.wsum
	for _, i := range idx {
		if math.Pow(float64(rest/q.wsum), queryExp) < PossibleThreshold {
			break
		}
		mask |= 1 << i
		rest -= q.units[i].w
	}
	return mask
}

// essentialTokens returns the query tokens a name must meet, each of them.
func (q *query) essentialTokens() []int {
	var out []int
	for i := range q.toks {
		if math.Pow(float64((q.wsum-q.units[i].w)/q.wsum), queryExp) < PossibleThreshold {
			out = append(out, i)
		}
	}
	return out
}

type scored struct {
	name  uint32
	score float64
}

type scratch struct {
	stamp  []uint32 // per name: == gen when the name is a candidate
	vstamp []uint32 // per vocabulary string: == vgen when it meets the essential token being checked
	gen    uint32
	vgen   uint32
	mgen   []uint32 // per vocabulary string: == gen when mpos holds its place in lists
	mpos   []int32
	cands  []uint32
	pairs  []pair
}

var scratchPool sync.Pool

func (ix *nameIndex) getScratch() *scratch {
	sc, _ := scratchPool.Get().(*scratch)
	if sc == nil || len(sc.stamp) != len(ix.names) || len(sc.vstamp) != ix.vocabLen() {
		sc = &scratch{stamp: make([]uint32, len(ix.names)), vstamp: make([]uint32, ix.vocabLen()),
			mgen: make([]uint32, ix.vocabLen()), mpos: make([]int32, ix.vocabLen())}
	}
	sc.gen++
	if sc.gen == 0 {
		clear(sc.stamp)
		clear(sc.mgen)
		sc.gen = 1
	}
	sc.cands = sc.cands[:0]
	return sc
}

// covers reports whether any of the query units behind matches ms covers a token in mask.
func (q *query) covers(ms []qmatch, mask uint64) bool {
	for _, m := range ms {
		u := &q.units[m.q]
		if spanMask(u.start, u.span)&mask != 0 {
			return true
		}
	}
	return false
}

// maxNameWeight bounds the weight of a name that can reach the threshold. Each query unit pairs with at most
// one name unit, of at most the largest weight any unit it meets has anywhere, so a name's matched weight is
// at most the sum M of those maxima; score <= cn^nameExp needs cn = matched/wsum >= threshold^(1/nameExp),
// so wsum <= M / threshold^(1/nameExp). This drops the long names that merely contain a common query word.
func (ix *nameIndex) maxNameWeight(q *query) float32 {
	best := make([]float32, len(q.units))
	for _, vm := range q.matches {
		id, ms := vm.id, vm.ms
		for _, m := range ms {
			best[m.q] = max(best[m.q], ix.unitMaxW[id])
		}
	}
	var sum float32
	for _, w := range best {
		sum += w
	}
	return sum / float32(math.Pow(PossibleThreshold, 1/nameExp)) * (1 + 1e-5)
}

// candidates collects the names that can reach the threshold (see the pruning note above).
func (ix *nameIndex) candidates(q *query, sc *scratch) {
	limit := ix.maxNameWeight(q)
	essential := q.essentialTokens()
	if len(essential) == 0 {
		required := q.requiredTokens()
		for _, vm := range q.matches {
			id, ms := vm.id, vm.ms
			if !q.covers(ms, required) {
				continue
			}
			for _, n := range ix.postings.at(id) {
				if sc.stamp[n] != sc.gen && ix.nameW[n] <= limit {
					sc.stamp[n] = sc.gen
					sc.cands = append(sc.cands, n)
				}
			}
		}
		return
	}
	// Intersect: start from the essential token with the shortest postings, then keep the names that also
	// meet each other essential token (checked through a stamp on the vocabulary strings that meet it).
	postingLen := make(map[int]int, len(essential))
	for _, tok := range essential {
		mask := uint64(1) << tok
		for _, vm := range q.matches {
			id, ms := vm.id, vm.ms
			if q.covers(ms, mask) {
				postingLen[tok] += len(ix.postings.at(id))
			}
		}
	}
	slices.SortStableFunc(essential, func(a, b int) int { return postingLen[a] - postingLen[b] })
	first := uint64(1) << essential[0]
	for _, vm := range q.matches {
		id, ms := vm.id, vm.ms
		if !q.covers(ms, first) {
			continue
		}
		for _, n := range ix.postings.at(id) {
			if sc.stamp[n] != sc.gen && ix.nameW[n] <= limit {
				sc.stamp[n] = sc.gen
				sc.cands = append(sc.cands, n)
			}
		}
	}
	for _, tok := range essential[1:] {
		if len(sc.cands) == 0 {
			return
		}
		sc.vgen++
		if sc.vgen == 0 {
			clear(sc.vstamp)
			sc.vgen = 1
		}
		mask := uint64(1) << tok
		for _, vm := range q.matches {
			id, ms := vm.id, vm.ms
			if q.covers(ms, mask) {
				sc.vstamp[id] = sc.vgen
			}
		}
		kept := sc.cands[:0]
		for _, n := range sc.cands {
			for _, u := range ix.unitsOf(&ix.names[n]) {
				if sc.vstamp[u.vocab] == sc.vgen {
					kept = append(kept, n)
					break
				}
			}
		}
		sc.cands = kept
	}
}

// fuzzy returns the names scoring at least PossibleThreshold, best first, using the index to find
// candidates.
func (ix *nameIndex) fuzzy(q *query) []scored {
	if len(q.units) == 0 || q.wsum == 0 {
		return nil
	}
	sc := ix.getScratch()
	defer scratchPool.Put(sc)
	ix.candidates(q, sc)
	if len(sc.cands) == 0 {
		return nil
	}
	// An array lookup instead of a map lookup per name unit: the scoring loop's hot path.
	for i, vm := range q.matches {
		sc.mgen[vm.id] = sc.gen
		sc.mpos[vm.id] = int32(i)
	}
	matchesOf := func(id uint32) []qmatch {
		if sc.mgen[id] != sc.gen {
			return nil
		}
		return q.matches[sc.mpos[id]].ms
	}
	var out []scored
	for _, n := range sc.cands {
		var s float64
		s, sc.pairs = ix.score(q, &ix.names[n], sc.pairs, matchesOf)
		if s >= PossibleThreshold {
			out = append(out, scored{name: n, score: s})
		}
	}
	sortScored(out)
	return out
}
