// Package screeningtest is the one fake screening for tests of the packages that screen through the
// screening interfaces (preflight, proxy, the CLI): an in-memory sanctions list and a table of domain
// facts. The real list and the real domain checker are tested in screening/sanctions and screening/domain.
package screeningtest

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/payguard/payguard/screening"
)

// AsOf is the fake list's data_as_of unless Sanctions.AsOf is set.
var AsOf = time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)

// Sanctions is a loaded sanctions list (screening.Sanctions). Its zero value is a loaded, empty list; the
// fields may be set before use, and List changes the listed addresses while it is in use (a refresh).
type Sanctions struct {
	Unready bool // Ready reports false: no list loaded
	Panics  bool // every screen panics (a corrupted index)
	AsOf    time.Time
	// Exact and Possible are names (as queried) that match exactly or possibly, as a made-up entry;
	// Names gives a name's whole result instead (real entries, for tests that check the details).
	Exact, Possible map[string]bool
	Names           map[string]screening.NameResult

	mu       sync.Mutex
	listed   map[string]screening.SanctionsMatch // lower-case address → the match returned
	screened []string
	calls    int
}

// Listed is a loaded list holding addresses.
func Listed(addresses ...string) *Sanctions {
	s := &Sanctions{}
	s.List(addresses...)
	return s
}

// List replaces the listed addresses (any case), each matching a fixed entry.
func (s *Sanctions) List(addresses ...string) {
	m := make(map[string]screening.SanctionsMatch, len(addresses))
	for _, a := range addresses {
		m[strings.ToLower(a)] = screening.SanctionsMatch{UID: 1, Name: "LISTED ENTITY", Score: 1, Address: a, Currency: "USDC"}
	}
	s.mu.Lock()
	s.listed = m
	s.mu.Unlock()
}

// ListMatch lists one address with the match it returns.
func (s *Sanctions) ListMatch(address string, m screening.SanctionsMatch) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.listed == nil {
		s.listed = map[string]screening.SanctionsMatch{}
	}
	s.listed[strings.ToLower(address)] = m
}

// ScreenAddress implements screening.Sanctions.
func (s *Sanctions) ScreenAddress(a string) []screening.SanctionsMatch {
	s.mu.Lock()
	s.screened = append(s.screened, a)
	s.calls++
	m, ok := s.listed[strings.ToLower(a)]
	s.mu.Unlock()
	if s.Panics {
		panic("index corrupted")
	}
	if ok {
		return []screening.SanctionsMatch{m}
	}
	return nil
}

// ScreenName implements screening.Sanctions: an exact name matches as listed, a possible one as "<name> Ltd".
func (s *Sanctions) ScreenName(n string) screening.NameResult {
	s.mu.Lock()
	s.calls++
	s.mu.Unlock()
	if s.Panics {
		panic("index corrupted")
	}
	if r, ok := s.Names[n]; ok {
		return r
	}
	var r screening.NameResult
	if s.Exact[n] {
		r.Exact = []screening.SanctionsMatch{{UID: 2, Name: n, MatchedName: n, Score: 1}}
	}
	if s.Possible[n] {
		r.Possible = []screening.SanctionsMatch{{UID: 3, Name: n + " Ltd", MatchedName: n + " Ltd", Score: 0.9}}
	}
	return r
}

// DataAsOf implements screening.Sanctions.
func (s *Sanctions) DataAsOf() time.Time {
	if s.AsOf.IsZero() {
		return AsOf
	}
	return s.AsOf
}

// Ready implements screening.Sanctions.
func (s *Sanctions) Ready() bool { return !s.Unready }

// Screened is every address screened so far, in order.
func (s *Sanctions) Screened() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.screened...)
}

// Calls counts the screens (addresses and names).
func (s *Sanctions) Calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

// Domains answers domain facts from a table (screening.Domains). A domain not in it gets Unknown's facts,
// or by default a valid domain whose age and DNS could not be looked up.
type Domains struct {
	Table   map[string]screening.DomainFacts
	Unknown func(domain string) screening.DomainFacts
	Panics  bool // every lookup panics
}

// Facts implements screening.Domains.
func (d *Domains) Facts(_ context.Context, domain string) screening.DomainFacts {
	if d.Panics {
		panic("resolver exploded")
	}
	if f, ok := d.Table[domain]; ok {
		return f
	}
	if d.Unknown != nil {
		return d.Unknown(domain)
	}
	return screening.DomainFacts{Domain: domain, Valid: true, AgeError: "no RDAP server", DNSError: "timeout"}
}
