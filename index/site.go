package index

import (
	"sort"
	"time"

	"github.com/payguard/payguard/internal/evmaddr"
	"github.com/payguard/payguard/policy"
	"github.com/payguard/payguard/store"
)

// A payee change at the site (docs/index.md). hold_on_payto_change compares a payee with what the Index saw
// of the same endpoint; a seller with a payee history at /weather could otherwise send the agent (a 302, a
// link) to any other URL of its own with a new payee, a URL with no history. So the Writer also records,
// per seller site (SiteOf: registrable domain, IPv4 address, IPv6 /64), every payee any endpoint of the
// site named (store.SitePayees), and a payee new at the site within policy.PayeeChangeWindow is held like a
// payee change at one endpoint, unless the site has a history of SiteSeveralPayees payees or more backed by
// evidence that cost something (Costly): a marketplace whose sellers are paid separately. What this leaves
// a seller: a new site (a registrable domain of its own) has no history to compare with.

// SiteSeveralPayees is the number of payees, each seen in costly evidence (a settled payment, a probe of a
// listed endpoint), from which a site counts as one with several payees: a new payee there is not held for
// being new at the site (its own endpoint's history still is compared).
const SiteSeveralPayees = 3

// SitePayeesOf are o's entries in its site's payee record: each payee it names (offers, and the paid
// option), canonical, seen at o.ObservedAt; costly when o is (Costly).
func SitePayeesOf(o store.Observation) (site string, out []store.SitePayee) {
	site = SiteOf(o.URL)
	if site == "" {
		return "", nil
	}
	costly := Costly(o)
	add := func(f store.Offer) {
		if f.PayTo == "" || f.Network == "" || f.Asset == "" {
			return
		}
		k := keyOf(f.Network, f.Asset)
		p := store.SitePayee{Network: k.network, Asset: k.asset, PayTo: policy.CanonicalPayee(f.PayTo),
			FirstAt: o.ObservedAt.UTC(), LastAt: o.ObservedAt.UTC(), URL: o.URL, Costly: costly}
		for _, x := range out {
			if x.Key() == p.Key() {
				return
			}
		}
		if store.CheckSitePayee(site, p) == nil {
			out = append(out, p)
		}
	}
	for _, f := range o.Offers {
		add(f)
	}
	if o.Paid != nil {
		add(*o.Paid)
	}
	return site, out
}

// SitePayeeChange is a payee new at its site: the site named Others (canonical, sorted) for the same
// network and asset before it, the earliest Since.
type SitePayeeChange struct {
	Site   string
	Others []string
	Since  time.Time
}

// SiteChange says whether payTo for network and asset is a new payee at site under hold_on_payto_change,
// given the site's payee record (entries last seen more than maxAge before now, 0 = none, or first seen
// after now are not used): nil when it is not, i.e. when the site named no other payee for that network and
// asset before payTo, payTo was first named there more than policy.PayeeChangeWindow ago, or the site has
// SiteSeveralPayees costly payees.
func SiteChange(site string, entries []store.SitePayee, network, asset, payTo string, now time.Time, maxAge time.Duration) *SitePayeeChange {
	if site == "" || payTo == "" {
		return nil
	}
	// payTo and asset are compared in their canonical forms without writing them (an option's are
	// checksummed): k is the wire key, and a payee is the same as payTo when its canonical form is.
	k, evmPayee := wireKey(network, asset), evmaddr.Is(payTo)
	samePayee := func(p string) bool {
		c := policy.CanonicalPayee(p) // a record's payee is canonical already: no copy
		if evmPayee {
			return evmaddr.EqualLower(c, payTo)
		}
		return c == payTo
	}
	var mine *store.SitePayee
	var rest []store.SitePayee
	var costly []string // distinct costly payees, up to SiteSeveralPayees
	for i := range entries {
		e := &entries[i]
		if maxAge > 0 && e.LastAt.Before(now.Add(-maxAge)) || e.FirstAt.After(now.Add(time.Minute)) {
			continue
		}
		if !k.sameAs(e.Network, e.Asset) {
			if ek := keyOf(e.Network, e.Asset); !k.sameAs(ek.network, ek.asset) {
				continue
			}
		}
		if e.Costly && len(costly) < SiteSeveralPayees && !contains(costly, e.PayTo) {
			costly = append(costly, e.PayTo)
		}
		if samePayee(e.PayTo) {
			mine = e
			continue
		}
		rest = append(rest, *e)
	}
	if len(costly) >= SiteSeveralPayees {
		return nil
	}
	judgedFrom := now // never named at the site: new now
	if mine != nil {
		if mine.FirstAt.Before(now.Add(-policy.PayeeChangeWindow)) {
			return nil
		}
		judgedFrom = mine.FirstAt
	}
	var others []string // the change is made only when payTo is new (the common answer is nil)
	var since time.Time
	for _, e := range rest {
		if !e.FirstAt.Before(judgedFrom) {
			continue // named no earlier than payTo: not a history payTo departs from
		}
		others = addSorted(others, e.PayTo)
		if since.IsZero() || e.FirstAt.Before(since) {
			since = e.FirstAt.UTC()
		}
	}
	if len(others) == 0 {
		return nil
	}
	sort.Strings(others)
	return &SitePayeeChange{Site: site, Others: others, Since: since}
}
