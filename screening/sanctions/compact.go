package sanctions

import (
	"hash/maphash"
	"math/bits"
	"strings"
)

// The name index is read-only once built, and its memory was most of a proxy's (issue 36: a process
// holding the full list was 60 MB, the index 46 MB of it). So it is stored compactly: a set of strings (the
// vocabulary, the distinct skeletons) is one arena string cut by uint32 offsets, found through an
// open-addressing table of uint32 slots (strIndex) instead of a Go map; every list of ids hanging off a
// string (postings, skeleton groups, exact references) is one flat slice cut by uint32 offsets (groups). A
// Go map cost 40–60 bytes per key plus an allocation per key and per value slice; these cost 4 bytes of
// offset and 6 of table per string, and no allocation at all. Figures: docs/benchmarks/sanctions.md,
// "Issue 36: a compact, read-only index".

// strIndex maps a fixed set of distinct strings to their ids (their order when indexed).
type strIndex struct {
	data  string   // the strings, one after the other
	off   []uint32 // string id is data[off[id]:off[id+1]]
	slots []uint32 // open addressing, linear probing; 0 is empty, else id+1 in the low idBits bits, a hash tag above
	bits  uint8    // idBits
	seed  maphash.Seed
}

// slotsPerKey sizes the table: a load of 2/3, at which a linear probe for a string that is not there
// reads about 5 slots, mostly in one cache line, and the tag spares the string comparison for nearly all.
const slotsPerKey = 1.5

// newStrIndex indexes keys (distinct), copying them into one arena so that the originals can be freed.
func newStrIndex(keys []string) strIndex {
	n := 0
	for _, k := range keys {
		n += len(k)
	}
	var b strings.Builder
	b.Grow(n)
	x := strIndex{off: make([]uint32, 1, len(keys)+1), seed: maphash.MakeSeed(), bits: uint8(bits.Len(uint(len(keys))))}
	for _, k := range keys {
		b.WriteString(k)
		x.off = append(x.off, uint32(b.Len()))
	}
	x.data = b.String()
	x.slots = make([]uint32, int(float64(len(keys))*slotsPerKey)+1)
	for id, k := range keys {
		i, tag := x.place(maphash.String(x.seed, k))
		for x.slots[i] != 0 {
			if i++; i == len(x.slots) {
				i = 0
			}
		}
		x.slots[i] = tag | uint32(id+1)
	}
	return x
}

// place returns a hash's first slot and its tag (the hash's top bits above the id's).
func (x *strIndex) place(h uint64) (int, uint32) {
	i := int(uint64(uint32(h)) * uint64(len(x.slots)) >> 32)
	return i, uint32(h>>32) &^ x.idMask()
}

func (x *strIndex) idMask() uint32 { return uint32(1<<x.bits - 1) }

// count is the number of strings.
func (x *strIndex) count() int { return max(0, len(x.off)-1) }

// key returns string id.
func (x *strIndex) key(id uint32) string { return x.data[x.off[id]:x.off[id+1]] }

// get returns the id of s.
func (x *strIndex) get(s string) (uint32, bool) {
	if len(x.slots) == 0 {
		return 0, false
	}
	i, tag := x.place(maphash.String(x.seed, s))
	mask := x.idMask()
	for {
		v := x.slots[i]
		if v == 0 {
			return 0, false
		}
		if v&^mask == tag && x.key(v&mask-1) == s {
			return v&mask - 1, true
		}
		if i++; i == len(x.slots) {
			i = 0
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
