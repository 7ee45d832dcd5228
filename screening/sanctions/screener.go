package sanctions

import (
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/payguard/payguard/screening"
)

// Screener is the screening.Sanctions the rest of payguard uses: it answers from the current list and
// swaps lists atomically, so a refresh never blocks or tears a screening call. Before the first list is
// set it is not Ready and every answer is empty: callers must report the sanctions facts as unknown.
type Screener struct {
	cur atomic.Pointer[List]
}

var _ screening.Sanctions = (*Screener)(nil)
var _ screening.Sanctions = (*List)(nil)

// NewScreener returns a Screener serving l (which may be nil: not ready yet).
func NewScreener(l *List) *Screener {
	s := &Screener{}
	if l != nil {
		s.cur.Store(l)
	}
	return s
}

// Swap installs a new list and returns the previous one. Then it hands the memory that loading left free
// back to the operating system (releaseLoadMemory).
func (s *Screener) Swap(l *List) *List {
	old := s.cur.Swap(l)
	releaseLoadMemory()
	return old
}

// releaseLoadMemory returns freed heap memory to the operating system at once (debug.FreeOSMemory: a
// garbage collection, then every free page released).
//
// Why: parsing and indexing the full list peaks near twice what the finished list keeps (the CSV records,
// the build's maps, the previous list during a refresh), and Go's background scavenger returns free pages
// only down to its heap goal, which at GOGC=100 is twice the live heap: without this call a process that
// had loaded the list kept its load's peak as idle RSS (issue 36; docs/benchmarks/sanctions.md, "Compact
// index"). It runs once per list installed (at start, then at most once per refresh), and costs one
// collection of the live heap, a few tens of milliseconds.
func releaseLoadMemory() { debug.FreeOSMemory() }

// List returns the list currently served (nil before the first load).
func (s *Screener) List() *List { return s.cur.Load() }

// ScreenAddress implements screening.Sanctions.
func (s *Screener) ScreenAddress(address string) []screening.SanctionsMatch {
	return s.cur.Load().ScreenAddress(address)
}

// ScreenName implements screening.Sanctions.
func (s *Screener) ScreenName(name string) screening.NameResult { return s.cur.Load().ScreenName(name) }

// DataAsOf implements screening.Sanctions.
func (s *Screener) DataAsOf() time.Time { return s.cur.Load().DataAsOf() }

// DataAsOfSource says what DataAsOf is (List.DataAsOfSource); screening.Check reports it.
func (s *Screener) DataAsOfSource() string { return s.cur.Load().DataAsOfSource() }

// Ready implements screening.Sanctions.
func (s *Screener) Ready() bool { return s.cur.Load().Ready() }
