package domain

import (
	"hash/maphash"
	"strings"
	"sync/atomic"
)

// The engine asks for the facts of a merchant domain on every decision (payguard serve's preflight, the
// proxy's 402), and nearly always for one of a few hosts; Normalize (UTS #46 mapping, two Public Suffix List
// lookups) was about 2 % of serve's CPU per trial preflight (docs/benchmarks/server.md, section serve5).
// Normalize is a pure function of its input, so its successes are kept in a small direct-mapped table: a
// slot holds one input and its Name, a new input takes the slot its hash picks, and a lookup is one atomic
// load and a string comparison, without a lock. Errors are not kept (an input that fails pays what it paid
// before). The table holds at most memoSlots names of at most maxInputLen bytes each, copied out of the
// caller's strings, so it keeps no request's buffer alive.

const memoSlots = 256

type atomicMemo = atomic.Pointer[memoEntry]

type memoEntry struct {
	input string
	name  Name
}

var (
	memoSeed  = maphash.MakeSeed()
	memoTable [memoSlots]atomicMemo
	// normalize is what a miss calls: Normalize, or a counting stand-in in tests.
	normalize = Normalize
)

// normalizeMemo is Normalize, with its successes kept (see above).
func normalizeMemo(input string) (Name, error) {
	slot := &memoTable[maphash.String(memoSeed, input)%memoSlots]
	if e := slot.Load(); e != nil && e.input == input {
		return e.name, nil
	}
	n, err := normalize(input)
	if err != nil {
		return n, err
	}
	slot.Store(&memoEntry{input: strings.Clone(input), name: Name{Host: strings.Clone(n.Host),
		Registrable: strings.Clone(n.Registrable), SharedSuffix: strings.Clone(n.SharedSuffix)}})
	return n, nil
}
