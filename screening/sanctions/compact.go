package sanctions

import (
	"hash/maphash"
	"math/bits"
	"strings"
)

// The name index is read-only once built, and its memory is most of a proxy's (issue 36: a process holding
// the full list was 60 MB, the index 46 MB of it). So it is stored compactly: every set of strings (the
// vocabulary, the skeletons, the exact keys) is one byte arena that its strings point into, found through
// an open-addressing table of uint32 ids instead of a Go map; every list of ids hanging off a string
// (postings, skeleton groups, exact references, name units) is one flat slice cut by uint32 offsets. A
// Go map costs 40–60 bytes per key plus an allocation per key and per value slice; these cost 16 bytes
// (the string header) plus 8 of table per key, and no allocation at all. See docs/benchmarks/sanctions.md,
// "Compact index".

// strIndex maps a fixed set of distinct strings to their ids (their order when indexed).
type strIndex struct {
	data  string   // the strings, one after the other
	off   []uint32 // string id is data[off[id]:off[id+1]]
	slots []uint32 // open addressing, linear probing: id+1, 0 for an empty slot; a power of two ≥ 2×count
	seed  maphash.Seed
}

// newStrIndex indexes keys (distinct), copying them into one arena so that the originals can be freed.
func newStrIndex(keys []string) strIndex {
	n := 0
	for _, k := range keys {
		n += len(k)
	}
	var b strings.Builder
	b.Grow(n)
	x := strIndex{off: make([]uint32, 1, len(keys)+1), seed: maphash.MakeSeed()}
	for _, k := range keys {
		b.WriteString(k)
		x.off = append(x.off, uint32(b.Len()))
	}
	x.data = b.String()
	x.slots = make([]uint32, 1<<bits.Len(uint(2*len(keys))))
	mask := uint64(len(x.slots) - 1)
	for id, k := range keys {
		i := maphash.String(x.seed, k) & mask
		for x.slots[i] != 0 {
			i = (i + 1) & mask
		}
		x.slots[i] = uint32(id) + 1
	}
	return x
}

// count is the number of strings.
func (x *strIndex) count() int { return max(0, len(x.off)-1) }

// key returns string id.
func (x *strIndex) key(id uint32) string { return x.data[x.off[id]:x.off[id+1]] }

// get returns the id of s.
func (x *strIndex) get(s string) (uint32, bool) {
	if len(x.slots) == 0 {
		return 0, false
	}
	mask := uint64(len(x.slots) - 1)
	for i := maphash.String(x.seed, s) & mask; ; i = (i + 1) & mask {
		v := x.slots[i]
		if v == 0 {
			return 0, false
		}
		if x.key(v-1) == s {
			return v - 1, true
		}
	}
}

// groups is a list of id lists, flattened: list i is data[start[i]:start[i+1]].
type groups[T any] struct {
	start []uint32
	data  []T
}

// flatten packs lists into one groups value.
func flatten[T any](lists [][]T) groups[T] {
	n := 0
	for _, l := range lists {
		n += len(l)
	}
	g := groups[T]{start: make([]uint32, len(lists)+1), data: make([]T, 0, n)}
	for i, l := range lists {
		g.data = append(g.data, l...)
		g.start[i+1] = uint32(len(g.data))
	}
	return g
}

// at returns list i (full slice expression: a caller's append cannot write into the next list).
func (g *groups[T]) at(i uint32) []T {
	a, b := g.start[i], g.start[i+1]
	return g.data[a:b:b]
}
