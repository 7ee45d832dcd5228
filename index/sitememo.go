package index

import (
	"hash/maphash"
	"strings"
	"sync/atomic"
)

// Every decision with an Index asks for its endpoint's site (SiteOf, for the site payee record), nearly
// always of the same few hosts, and siteOfHost's two reads of the host (netip.ParseAddr, whose failure on a
// name allocates its error, then the Public Suffix List, which parses it as an address again) were about
// 1.5 % of payguard serve's CPU per trial preflight (docs/benchmarks/server.md, section serve5). It is a
// pure function of the host, so its answers are kept in a small direct-mapped table: a slot holds one host
// and its site, a new host takes the slot its hash picks, a lookup is one atomic load and a string
// comparison, without a lock. The table holds at most siteSlots hosts of at most maxMemoHost bytes (a DNS
// name's limit; a longer host is not memoized), copied out of the caller's strings.

const (
	siteSlots   = 256
	maxMemoHost = 253
)

type siteMemoEntry struct{ host, site string }

type atomicSiteMemo = atomic.Pointer[siteMemoEntry]

var (
	siteSeed  = maphash.MakeSeed()
	siteTable [siteSlots]atomicSiteMemo
	// siteOfHostSlow is what a miss calls: siteOfHostUncached, or a counting stand-in in tests.
	siteOfHostSlow = siteOfHostUncached
)

// siteOfHost is SiteOf of a URL whose host, in CanonicalHost's spelling, is host.
func siteOfHost(host string) string {
	if len(host) > maxMemoHost {
		return siteOfHostSlow(host)
	}
	slot := &siteTable[maphash.String(siteSeed, host)%siteSlots]
	if e := slot.Load(); e != nil && e.host == host {
		return e.site
	}
	site := siteOfHostSlow(host)
	host = strings.Clone(host)
	if site != "" {
		site = strings.Clone(site)
	}
	slot.Store(&siteMemoEntry{host: host, site: site})
	return site
}
