package index

import (
	"strings"

	"github.com/payguard/payguard/internal/slotmemo"
)

// Every decision with an Index asks for its endpoint's site (SiteOf, for the site payee record), nearly
// always of the same few hosts, and siteOfHost's two reads of the host (netip.ParseAddr, whose failure on a
// name allocates its error, then the Public Suffix List, which parses it as an address again) were about
// 1.5 % of payguard serve's CPU per trial preflight (docs/benchmarks/server.md, section serve5). It is a
// pure function of the host, so its answers are kept in a slotmemo table of siteSlots hosts of at most
// maxMemoHost bytes (a DNS name's limit; a longer host is not memoized); the site is copied out of the
// caller's string too.

const (
	siteSlots   = 256
	maxMemoHost = 253
)

var (
	siteTable = slotmemo.New[string](siteSlots)
	// siteOfHostSlow is what a miss calls: siteOfHostUncached, or a counting stand-in in tests.
	siteOfHostSlow = siteOfHostUncached
)

// siteOfHost is SiteOf of a URL whose host, in CanonicalHost's spelling, is host.
func siteOfHost(host string) string {
	if len(host) > maxMemoHost {
		return siteOfHostSlow(host)
	}
	if site, ok := siteTable.Get(host); ok {
		return site
	}
	site := siteOfHostSlow(host)
	siteTable.Put(host, strings.Clone(site))
	return site
}
