// Package slotmemo keeps recent answers of a pure function of a string in a small direct-mapped table: a slot
// holds one key and its value, a new key takes the slot its hash picks (evicting what was there), and a
// lookup is one atomic load and a string comparison, without a lock. The hot paths of issue 36 (a decision's
// merchant domain, its endpoint's site, serve's input challenge) ask about the same few keys over and over;
// each memoizes through one Table instead of a table of its own.
//
// The table never grows: it holds at most its slot count of entries. Put copies the key, so a kept entry
// holds no caller's buffer; the value is kept as given, and a caller whose value shares memory with its
// input, or that hands the value out to be changed, copies it on the way in or out.
package slotmemo

import (
	"hash/maphash"
	"strings"
	"sync/atomic"
)

// Table is a direct-mapped memo from string keys to values of type V; its zero value is not usable (New).
type Table[V any] struct {
	seed  maphash.Seed
	slots []atomic.Pointer[entry[V]]
}

type entry[V any] struct {
	key string
	val V
}

// New is a table of n slots (n > 0).
func New[V any](n int) *Table[V] {
	return &Table[V]{seed: maphash.MakeSeed(), slots: make([]atomic.Pointer[entry[V]], n)}
}

// Get is the value kept for key, if its slot holds key.
func (t *Table[V]) Get(key string) (V, bool) {
	if e := t.slots[maphash.String(t.seed, key)%uint64(len(t.slots))].Load(); e != nil && e.key == key {
		return e.val, true
	}
	var zero V
	return zero, false
}

// GetBytes is Get of string(key), without converting it.
func (t *Table[V]) GetBytes(key []byte) (V, bool) {
	if e := t.slots[maphash.Bytes(t.seed, key)%uint64(len(t.slots))].Load(); e != nil && e.key == string(key) {
		return e.val, true
	}
	var zero V
	return zero, false
}

// Put keeps val for key (a copy of it) in key's slot, in place of whatever the slot held.
func (t *Table[V]) Put(key string, val V) {
	key = strings.Clone(key)
	t.slots[maphash.String(t.seed, key)%uint64(len(t.slots))].Store(&entry[V]{key: key, val: val})
}
