// Package sanctions screens wallet addresses and names against OFAC's Specially Designated Nationals (SDN)
// list. It loads OFAC's legacy CSV set (sdn.csv, alt.csv, add.csv, sdn_comments.csv) or the SDN XML file,
// extracts every digital currency address from the remarks, builds a name index for exact and fuzzy matching,
// and keeps the list fresh with a Refresher that swaps a validated new list in atomically.
//
// A *List is immutable once built and safe for concurrent use. A *Screener holds the current list behind an
// atomic pointer and implements screening.Sanctions.
package sanctions

import (
	"cmp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/payguard/payguard/internal/evmaddr"
	"github.com/payguard/payguard/screening"
)

// Entry types as OFAC names them (sdn.csv SDN_Type, lower case; the CSV's null means entity).
const (
	TypeIndividual = "individual"
	TypeEntity     = "entity"
	TypeVessel     = "vessel"
	TypeAircraft   = "aircraft"
)

// Entry is one SDN list entry.
type Entry struct {
	UID       int
	Name      string // primary name as OFAC writes it ("LAST, First" for individuals)
	Type      string // one of the Type constants
	Programs  []string
	Aliases   []Alias
	Addresses []DigitalAddress
}

// Alias is another name of an entry: an alt.csv row or XML aka, or an inline "a.k.a. '...'" from the remarks.
type Alias struct {
	Name string
	Kind string // aka, fka, nka
	// Weak marks OFAC's low-quality aliases (XML category "weak", and the quoted a.k.a.'s in sdn.csv remarks,
	// which OFAC uses for weak aliases). They never produce an exact (blocking) match: see ScreenName.
	Weak bool
}

// DigitalAddress is a "Digital Currency Address - CUR addr" item from an entry's remarks or ID list.
type DigitalAddress struct {
	Currency string // XBT, ETH, USDT, ...
	Address  string // as OFAC lists it
}

// List is a loaded, indexed SDN list. Build it with LoadDir, ParseCSV or ParseXML.
type List struct {
	entries  []Entry
	byUID    []int32              // entry positions, sorted by uid (Entry)
	addrs    map[string][]addrRef // key: addressKey(address)
	names    *nameIndex
	facts    *nameFacts // per list name, what the match evidence needs (evidence.go)
	dataAsOf time.Time
	source   string
	xml      bool // loaded from SDN.XML, whose Publish_Date is the data-as-of
	// asOfSource says what dataAsOf is (an AsOf… constant).
	asOfSource string
	sourceKind string // "" is SourceDirectory
	warnings   []string
}

// What a list's DataAsOf is, from the most to the least telling. SDN.XML states its publication date; the
// CSV set states none, so a download's HTTP Last-Modified (OFAC's publication, as its server reports it)
// stands in, then the time of the fetch, and for files given by hand their modification time (which a copy
// may have reset).
const (
	AsOfPublishDate  = "publish_date"       // SDN.XML's Publish_Date
	AsOfLastModified = "http_last_modified" // the download's Last-Modified header
	AsOfFetchTime    = "fetch_time"         // when payguard downloaded it (no Last-Modified)
	AsOfFileModTime  = "file_mtime"         // the local file's modification time
)

// DataAsOfSource says what DataAsOf is: one of the AsOf… constants ("" for a list built in memory).
func (l *List) DataAsOfSource() string {
	if l == nil {
		return ""
	}
	return l.asOfSource
}

func (l *List) fromXML() bool { return l.xml }

type addrRef struct {
	entry    int32
	currency string
	address  string
}

// Len is the number of entries.
func (l *List) Len() int {
	if l == nil {
		return 0
	}
	return len(l.entries)
}

// Entries returns the entries in file order. The slice must not be modified.
func (l *List) Entries() []Entry { return l.entries }

// Entry returns the entry with the given uid.
func (l *List) Entry(uid int) (Entry, bool) {
	k, ok := slices.BinarySearchFunc(l.byUID, uid, func(i int32, uid int) int { return cmp.Compare(l.entries[i].UID, uid) })
	if !ok {
		return Entry{}, false
	}
	return l.entries[l.byUID[k]], true
}

// Source says where the list was loaded from.
func (l *List) Source() string { return l.source }

// Source kinds (List.SourceKind): what a list was loaded from, without saying where.
const (
	SourceDirectory = "directory" // --sanctions-dir, or a file or directory given by path
	SourceCache     = "cache"     // the refresher's cache, at start
	SourceSnapshot  = "snapshot"  // the refresher's seed (the image's snapshot), while the cache is empty
	SourceDownload  = "download"  // a refresh from the configured sources
)

// SourceKind is what the list was loaded from (Source* constants), for documents that must not name paths.
func (l *List) SourceKind() string {
	if l.sourceKind == "" {
		return SourceDirectory
	}
	return l.sourceKind
}

// Warnings lists oddities found while loading that did not make the list unusable (for example an alias row
// whose uid is not in sdn.csv, or a truncated address fragment that was dropped).
func (l *List) Warnings() []string { return l.warnings }

// DataAsOf is the list's publish date when the source states it (SDN.XML), otherwise the download's
// Last-Modified, the fetch time, or the file's modification time; DataAsOfSource says which.
func (l *List) DataAsOf() time.Time {
	if l == nil {
		return time.Time{}
	}
	return l.dataAsOf
}

// Ready reports whether the list holds entries.
func (l *List) Ready() bool { return l != nil && len(l.entries) > 0 }

// ScreenAddress returns the entries listing the address. EVM-style addresses (0x and 40 hex digits) match
// regardless of letter case; every other address must match exactly. Surrounding spaces are ignored.
func (l *List) ScreenAddress(address string) []screening.SanctionsMatch {
	if l == nil {
		return nil
	}
	var refs []addrRef
	if evmaddr.Is(address) {
		// addressKey of an EVM address is its canonical (lower-case) form: looked up from a key on the
		// stack, so that screening a payee (every decision) allocates nothing.
		key := evmaddr.CanonicalKey(address)
		refs = l.addrs[string(key[:])]
	} else {
		refs = l.addrs[addressKey(address)]
	}
	if len(refs) == 0 {
		return nil
	}
	out := make([]screening.SanctionsMatch, 0, len(refs))
	for _, r := range refs {
		e := &l.entries[r.entry]
		out = append(out, screening.SanctionsMatch{
			UID: e.UID, Name: e.Name, Type: e.Type, Programs: e.Programs,
			Score: 1, Address: r.address, Currency: r.currency,
		})
	}
	return out
}

// AddressCount is the number of distinct listed addresses (EVM addresses counted case-insensitively).
func (l *List) AddressCount() int { return len(l.addrs) }

// Addresses returns every distinct listed address with its currencies, sorted by address.
func (l *List) Addresses() []DigitalAddress {
	var out []DigitalAddress
	seen := map[DigitalAddress]bool{}
	for _, refs := range l.addrs {
		for _, r := range refs {
			d := DigitalAddress{Currency: r.currency, Address: r.address}
			if !seen[d] {
				seen[d] = true
				out = append(out, d)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Address != out[j].Address {
			return out[i].Address < out[j].Address
		}
		return out[i].Currency < out[j].Currency
	})
	return out
}

// newList indexes entries. Entries with a duplicate uid keep the first occurrence.
func newList(entries []Entry, dataAsOf time.Time, source string, warnings []string, index bool) *List {
	l := &List{
		addrs:    make(map[string][]addrRef),
		dataAsOf: dataAsOf,
		source:   source,
		warnings: warnings,
	}
	l.entries = make([]Entry, 0, len(entries))
	seen := make(map[int]bool, len(entries))
	for _, e := range entries {
		if seen[e.UID] {
			l.warnings = append(l.warnings, "duplicate uid "+itoa(e.UID)+" ignored")
			continue
		}
		seen[e.UID] = true
		l.entries = append(l.entries, e)
	}
	l.entries = clipped(l.entries)
	l.byUID = make([]int32, len(l.entries))
	for i := range l.byUID {
		l.byUID[i] = int32(i)
	}
	slices.SortFunc(l.byUID, func(a, b int32) int { return cmp.Compare(l.entries[a].UID, l.entries[b].UID) })
	compactEntries(l.entries)
	for i := range l.entries {
		for _, a := range l.entries[i].Addresses {
			k := addressKey(a.Address)
			dup := false
			for _, r := range l.addrs[k] {
				if r.entry == int32(i) && r.currency == a.Currency {
					dup = true
				}
			}
			if !dup {
				l.addrs[k] = append(l.addrs[k], addrRef{entry: int32(i), currency: a.Currency, address: a.Address})
			}
		}
	}
	if index {
		l.names = buildNameIndex(l.entries)
		l.facts = buildNameFacts(l.entries)
	}
	return l
}

// compactEntries copies the entries' strings out of whatever they point into, so that it can be freed: a
// parser's field is a piece of its whole record (encoding/csv returns one string per row, remarks
// included), which the list would otherwise keep. Names and addresses go into one arena; types, alias
// kinds, programs and currencies, a few dozen distinct values, are shared; slices grown by append are cut
// to their length.
func compactEntries(entries []Entry) {
	// Every string the arena holds, in one fixed order: walk calls f on each.
	walk := func(f func(*string)) {
		for i := range entries {
			e := &entries[i]
			f(&e.Name)
			for j := range e.Aliases {
				f(&e.Aliases[j].Name)
			}
			for j := range e.Addresses {
				f(&e.Addresses[j].Address)
			}
		}
	}
	n := 0
	walk(func(s *string) { n += len(*s) })
	var b strings.Builder
	b.Grow(n)
	walk(func(s *string) { b.WriteString(*s) })
	all, off := b.String(), 0
	walk(func(s *string) {
		*s = all[off : off+len(*s)]
		off += len(*s)
	})
	shared := map[string]string{}
	share := func(s *string) {
		if v, ok := shared[*s]; ok {
			*s = v
			return
		}
		*s = strings.Clone(*s)
		shared[*s] = *s
	}
	for i := range entries {
		e := &entries[i]
		share(&e.Type)
		e.Programs = clipped(e.Programs)
		for j := range e.Programs {
			share(&e.Programs[j])
		}
		e.Aliases = clipped(e.Aliases)
		for j := range e.Aliases {
			share(&e.Aliases[j].Kind)
		}
		e.Addresses = clipped(e.Addresses)
		for j := range e.Addresses {
			share(&e.Addresses[j].Currency)
		}
	}
}

// clipped returns s, copied to a backing array of its length if it has spare capacity.
func clipped[T any](s []T) []T {
	if cap(s) == len(s) {
		return s
	}
	return slices.Clone(s)
}
