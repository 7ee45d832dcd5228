package index

import (
	"context"
	"net/netip"
	"net/url"
	"sort"
	"time"

	"golang.org/x/net/publicsuffix"

	"github.com/payguard/payguard/internal/plainurl"
	"github.com/payguard/payguard/store"
	"github.com/payguard/payguard/x402"
)

// The category median (max_price_multiple, docs/SPEC.md §7.3, docs/index.md). The price sample of a category
// is built by the Writer from costly observations (Costly: a settled payment, a usable probe of a listed
// endpoint) of endpoints whose seller declares that category (store.CategoryPrices); an unpaid 402 never
// enters it. A seller declares its own category, so the median is built to resist one seller moving it:
//   - each site (registrable domain, else host name) counts once: its price is the lower median of its URLs'
//     prices, so ten endpoints on one host, or on ten subdomains of one domain, are one vote;
//   - the endpoint being judged, and every URL of its site, are left out of its own category's median;
//   - fewer than MinCategoryHosts other sites: no category median, and the rule falls back to the
//     endpoint's own observed history.

// MinCategoryHosts is the number of other sites a category needs before its median is used.
const MinCategoryHosts = 3

// SiteOf is the unit the category median counts once: the registrable domain of rawURL's host (eTLD+1),
// else its host name (an IPv4 address, localhost) in its canonical spelling (CanonicalHost); an IPv6
// address counts as its /64 (one server, or one subscriber, is routed a whole /64 and could otherwise
// answer from as many "sites" as it likes). "" when rawURL has no host.
func SiteOf(rawURL string) string {
	if u, ok := plainurl.Parse(rawURL); ok {
		return siteOfHost(u.Host) // already CanonicalHost's spelling, without parsing the URL again
	}
	return siteOfParsed(rawURL)
}

// siteOfParsed is SiteOf's full path, for every URL.
func siteOfParsed(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return ""
	}
	host := CanonicalHost(u.Hostname())
	if host == "" {
		return ""
	}
	return siteOfHost(host)
}

// siteOfHostUncached is siteOfHost without its memo (sitememo.go).
func siteOfHostUncached(host string) string {
	if a, err := netip.ParseAddr(host); err == nil {
		if a.Is6() {
			return netip.PrefixFrom(a.WithZone(""), 64).Masked().String()
		}
		return host
	}
	if site, err := publicsuffix.EffectiveTLDPlusOne(host); err == nil {
		return site
	}
	return host
}

// CategoryPriceOf is o's entry in its category's price sample: its cheapest offer per network and asset
// (at most store.MaxCategoryOffers; an upto offer's amount is a maximum, not a price, and is left out). Only
// evidence that cost something has one (Costly): a seller could otherwise answer 402s declaring any category
// at any price from as many sites as it likes, for free, and move the median against honest sellers. ok is
// false when o names no category, offers no parseable price, or is not costly. An unpaid 402 still counts
// toward its own endpoint's history (Derive).
func CategoryPriceOf(o store.Observation) (category string, p store.CategoryPrice, ok bool) {
	if o.Category == "" || !Costly(o) {
		return "", p, false
	}
	offers := o.Offers
	if o.Source == store.SourcePaid {
		paid := *o.Paid
		paid.PayTo = ""
		offers = []store.Offer{paid} // what was paid, not what was offered beside it
	}
	if len(offers) == 0 {
		return "", p, false
	}
	site := SiteOf(o.URL)
	if site == "" {
		return "", p, false
	}
	p = store.CategoryPrice{URL: o.URL, Host: site, At: o.ObservedAt}
	cheapest := make([]uint64, 0, 2)
	for _, off := range offers {
		if off.Scheme == x402.SchemeUpto {
			continue // a maximum the seller may settle below, not a price to compare others with
		}
		a, err := x402.ParseAtomic(off.Amount)
		if err != nil {
			continue
		}
		k := keyOf(off.Network, off.Asset)
		i := 0
		for i < len(p.Offers) && (p.Offers[i].Network != k.network || p.Offers[i].Asset != k.asset) {
			i++
		}
		switch {
		case i < len(p.Offers):
			if a < cheapest[i] {
				cheapest[i], p.Offers[i].Scheme, p.Offers[i].Amount = a, off.Scheme, utoa(a)
			}
		case len(p.Offers) < store.MaxCategoryOffers:
			p.Offers = append(p.Offers, store.Offer{Scheme: off.Scheme, Network: k.network, Asset: k.asset, Amount: utoa(a)})
			cheapest = append(cheapest, a)
		}
	}
	return o.Category, p, len(p.Offers) > 0
}

// Costly reports whether o is evidence that cost something: the seller's answer to a payment that settled
// (by this deployment or, through a shared store, the fleet), or a usable probe of an endpoint a
// facilitator's discovery list publishes (a listing comes from the facilitator, not from the seller's own
// word). Only such evidence moves a statistic shared between endpoints: a category's median, a site's count
// of payees.
func Costly(o store.Observation) bool {
	switch o.Source {
	case store.SourcePaid:
		return o.Settled && o.Usable && o.Paid != nil
	case store.SourceProbe:
		return o.Listed && o.Usable
	}
	return false
}

// SitePrices is a category sample derived for one network and asset: each site's price (the lower median of
// its endpoints' prices), cheapest first. A Cache derives it once per category entry, so a decision only
// walks it once (MedianExcluding).
type SitePrices []SitePrice

// SitePrice is one site's price in a category.
type SitePrice struct {
	Site  string
	Price uint64
}

// DeriveSitePrices derives the sites' prices for network and asset from sample, without entries older than
// maxAge before now (0 = none) or from the future.
func DeriveSitePrices(sample []store.CategoryPrice, network, asset string, now time.Time, maxAge time.Duration) SitePrices {
	k := keyOf(network, asset)
	bySite := map[string][]uint64{}
	for _, p := range sample {
		if maxAge > 0 && p.At.Before(now.Add(-maxAge)) || p.At.After(now.Add(time.Minute)) {
			continue
		}
		for _, off := range p.Offers {
			// Entries are written canonical (CategoryPriceOf): compare as stored first, canonicalize only
			// what differs (about 0.4 µs an offer).
			if (off.Network != k.network || off.Asset != k.asset) && keyOf(off.Network, off.Asset) != k {
				continue
			}
			if a, err := x402.ParseAtomic(off.Amount); err == nil {
				bySite[p.Host] = append(bySite[p.Host], a)
			}
		}
	}
	out := make(SitePrices, 0, len(bySite))
	for site, prices := range bySite {
		out = append(out, SitePrice{Site: site, Price: median(prices)})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Price != out[j].Price {
			return out[i].Price < out[j].Price
		}
		return out[i].Site < out[j].Site
	})
	return out
}

// MedianExcluding is the lower median of the sites' prices without site's, and the number of sites counted.
func (s SitePrices) MedianExcluding(site string) (med uint64, hosts int) {
	for _, p := range s {
		if p.Site != site {
			hosts++
		}
	}
	if hosts == 0 {
		return 0, 0
	}
	want, i := (hosts-1)/2, 0
	for _, p := range s {
		if p.Site == site {
			continue
		}
		if i == want {
			return p.Price, hosts
		}
		i++
	}
	return 0, 0 // unreachable
}

// SitePricer is a CategoryReader that derives a category's site prices itself, and so may keep them
// (Cache: derived once per cached entry instead of once per decision). CategorySitePrices uses it when r
// has it; any other CategoryReader (a store) is read and derived on each call, with the same result.
type SitePricer interface {
	CategoryReader
	SitePrices(ctx context.Context, category, network, asset string, now time.Time, maxAge time.Duration) (SitePrices, error)
}

var _ SitePricer = (*Cache)(nil)

// CategorySitePrices is category's site prices for network and asset from r: through r's own SitePrices
// when it is a SitePricer (Cache), else read and derived.
func CategorySitePrices(ctx context.Context, r CategoryReader, category, network, asset string, now time.Time, maxAge time.Duration) (SitePrices, error) {
	if c, ok := r.(SitePricer); ok {
		return c.SitePrices(ctx, category, network, asset, now, maxAge)
	}
	sample, err := r.CategoryPrices(ctx, category)
	if err != nil {
		return nil, err
	}
	return DeriveSitePrices(sample, network, asset, now, maxAge), nil
}

// CategoryReader reads a category's price sample (store.CategoryPrices and Cache satisfy it).
type CategoryReader interface {
	CategoryPrices(ctx context.Context, category string) ([]store.CategoryPrice, error)
}
