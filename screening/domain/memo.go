package domain

import (
	"strings"

	"github.com/payguard/payguard/internal/slotmemo"
)

// The engine asks for the facts of a merchant domain on every decision (payguard serve's preflight, the
// proxy's 402), and nearly always for one of a few hosts; Normalize (UTS #46 mapping, two Public Suffix List
// lookups) was about 2 % of serve's CPU per trial preflight (docs/benchmarks/server.md, section serve5).
// Normalize is a pure function of its input, so its successes are kept in a slotmemo table of memoSlots
// names (Normalize refuses inputs over maxInputLen bytes). Errors are not kept (an input that fails pays what
// it paid before). The Name is copied out of the caller's string, so the memo keeps no request's buffer alive.

const memoSlots = 256

var (
	memoTable = slotmemo.New[Name](memoSlots)
	// normalize is what a miss calls: Normalize, or a counting stand-in in tests.
	normalize = Normalize
)

// normalizeMemo is Normalize, with its successes kept (see above).
func normalizeMemo(input string) (Name, error) {
	if n, ok := memoTable.Get(input); ok {
		return n, nil
	}
	n, err := normalize(input)
	if err != nil {
		return n, err
	}
	memoTable.Put(input, Name{Host: strings.Clone(n.Host), Registrable: strings.Clone(n.Registrable),
		SharedSuffix: strings.Clone(n.SharedSuffix)})
	return n, nil
}
