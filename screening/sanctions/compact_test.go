package sanctions

import (
	"math/rand/v2"
	"strconv"
	"testing"
)

// TestStrIndex checks the open-addressing table against a map: every key finds its id, and strings that
// are not keys (prefixes, extensions, the empty string, near misses) find nothing, at sizes around the
// table's boundaries (no key, one, powers of two, where the id field gains a bit).
func TestStrIndex(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 2, 3, 7, 8, 255, 256, 257, 1000, 65535, 65536, 70000} {
		want := map[string]uint32{}
		var keys []string
		for len(keys) < n {
			k := strconv.FormatUint(rng.Uint64N(uint64(4*n+10)), 36)
			if len(keys) == 0 && n > 0 {
				k = "" // the empty string is a key like any other
			}
			if _, dup := want[k]; dup {
				continue
			}
			want[k] = uint32(len(keys))
			keys = append(keys, k)
		}
		x := newStrIndex(keys)
		if x.count() != n {
			t.Fatalf("n=%d: count %d", n, x.count())
		}
		for k, id := range want {
			if got, ok := x.get(k); !ok || got != id || x.key(id) != k {
				t.Fatalf("n=%d: get(%q) = %d, %v; want %d", n, k, got, ok, id)
			}
		}
		for i := range 2000 {
			q := strconv.FormatUint(rng.Uint64N(uint64(8*n+20)), 36)
			if i%3 == 0 {
				q += "x"
			}
			_, in := want[q]
			if got, ok := x.get(q); ok != in || ok && got != want[q] {
				t.Fatalf("n=%d: get(%q) = %d, %v; in set: %v", n, q, got, ok, in)
			}
		}
	}
}

// TestGroupsAppendDoesNotSpill checks that a caller appending to one list cannot overwrite the next.
func TestGroupsAppendDoesNotSpill(t *testing.T) {
	g := flatten([][]uint32{{1, 2}, {3}, nil, {4, 5}})
	a := append(g.at(0), 99)
	if a[2] != 99 || g.at(1)[0] != 3 {
		t.Fatalf("append to list 0 wrote into list 1: %v", g.data)
	}
	if len(g.at(2)) != 0 || len(g.at(3)) != 2 || g.at(3)[1] != 5 {
		t.Fatalf("lists: %v %v", g.start, g.data)
	}
}
