package store

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"
)

// The site payee record: the payees each seller site (index.SiteOf: registrable domain, an IPv4 address, an
// IPv6 /64) has named, per network and asset, and since when. hold_on_payto_change reads it so that a new
// payee on any endpoint of a site is seen, not only a change at one URL: a seller with a payee history at
// /weather cannot escape it by sending the agent to /weather2 (docs/index.md "A payee change at the site").
// One entry per site, network, asset and payee, at most MaxSitePayees per site (the least recently seen
// go first), none last seen more than the retention's MaxAge before the newest put: a bound per seller site
// whatever the number of its URLs.
const MaxSitePayees = 64

// SitePayee is one payee a site named for one network and asset.
type SitePayee struct {
	Network string    `json:"network"` // CAIP-2 when known
	Asset   string    `json:"asset"`   // canonical (lower-case EVM address)
	PayTo   string    `json:"pay_to"`  // canonical (policy.CanonicalPayee)
	FirstAt time.Time `json:"first_at"`
	LastAt  time.Time `json:"last_at"`
	URL     string    `json:"url"` // the endpoint it was first named at
	// Costly is true once a payment to it settled at the site or a probe of a listed endpoint of the site
	// saw it: evidence that cost something (only such payees make a site "several payees").
	Costly bool `json:"costly"`
}

// Key is the entry's identity within its site.
func (p SitePayee) Key() string { return p.Network + "|" + p.Asset + "|" + p.PayTo }

// SitePayees stores the site payee record. PutSitePayee merges p into site's entry for p.Key() (the
// earliest FirstAt with its URL, the latest LastAt, Costly once true stays true) and applies the bounds
// above and keep.MaxAge; SitePayees returns a site's entries (any order; an empty slice for an unknown site).
type SitePayees interface {
	PutSitePayee(ctx context.Context, site string, p SitePayee, keep Retention) error
	SitePayees(ctx context.Context, site string) ([]SitePayee, error)
}

// CheckSitePayee validates a put.
func CheckSitePayee(site string, p SitePayee) error {
	if err := CheckName("site", site); err != nil {
		return err
	}
	for _, v := range []string{p.Network, p.Asset, p.PayTo} {
		if v == "" || len(v) > MaxObservedField || strings.ContainsAny(v, "|\x00") {
			return fmt.Errorf("%w: site payee field %q (1 to %d bytes, no '|')", ErrInvalid, v, MaxObservedField)
		}
	}
	if p.URL == "" || len(p.URL) > MaxNameBytes {
		return fmt.Errorf("%w: site payee URL of %d bytes (1 to %d)", ErrInvalid, len(p.URL), MaxNameBytes)
	}
	if p.FirstAt.IsZero() || p.LastAt.IsZero() || p.LastAt.Before(p.FirstAt) {
		return fmt.Errorf("%w: site payee times %s..%s", ErrInvalid, p.FirstAt, p.LastAt)
	}
	return nil
}

// MergeSitePayee is old and p as one entry (same Key).
func MergeSitePayee(old, p SitePayee) SitePayee {
	if old.FirstAt.Before(p.FirstAt) {
		p.FirstAt, p.URL = old.FirstAt, old.URL
	}
	if old.LastAt.After(p.LastAt) {
		p.LastAt = old.LastAt
	}
	p.Costly = p.Costly || old.Costly
	return p
}

// TrimSitePayees is a site's entries after merging p in: entries last seen more than keep.MaxAge before
// p.LastAt go, then the least recently seen past MaxSitePayees (never p's). It returns the merged p and the
// keys removed from list.
func TrimSitePayees(list []SitePayee, p SitePayee, keep Retention) (merged SitePayee, removed []string) {
	merged = p
	var rest []SitePayee
	for _, x := range list {
		switch {
		case x.Key() == p.Key():
			merged = MergeSitePayee(x, p)
		case keep.MaxAge > 0 && x.LastAt.Before(p.LastAt.Add(-keep.MaxAge)):
			removed = append(removed, x.Key())
		default:
			rest = append(rest, x)
		}
	}
	if over := len(rest) + 1 - MaxSitePayees; over > 0 {
		sort.SliceStable(rest, func(i, j int) bool { return rest[i].LastAt.Before(rest[j].LastAt) })
		for _, x := range rest[:over] {
			removed = append(removed, x.Key())
		}
	}
	return merged, removed
}
