package preflight

import (
	"context"
	"strings"
	"time"

	"github.com/payguard/payguard/index"
	"github.com/payguard/payguard/policy"
)

// IndexReader is the part of the store the engine reads Endpoint Index observations from; an
// index.Cache (which also derives and keeps the summary) is what the proxy and serve use.
type IndexReader = index.Reader

// Index evidence statuses.
const (
	IndexObserved       = "observed"        // observations of the endpoint were used
	IndexNoObservations = "no_observations" // none: every Index fact is unknown (never positive evidence)
	IndexUnavailable    = "unavailable"     // the Index could not be read: unknown, never positive evidence
	IndexNoEndpoint     = "no_endpoint_url" // the input names no http(s) endpoint URL to look up
)

// IndexEvidence is SPEC's index_evidence: what the Index knew about the endpoint when it decided, for the
// judged option. Inspect it with data_as_of; its own data_as_of is the newest observation used.
type IndexEvidence struct {
	Status       string `json:"status"`
	URL          string `json:"url,omitempty"`
	Method       string `json:"method,omitempty"`
	Observations int    `json:"observations"`
	DataAsOf     string `json:"data_as_of"` // RFC 3339 of the newest observation used, or "unknown"
	// PayTo is the payee evidence for the judged option's network and asset.
	PayTo *PayToEvidence `json:"payto,omitempty"`
	// Price is the price evidence for the judged option's network and asset.
	Price *PriceEvidence `json:"price,omitempty"`
	// ConsecutiveFailedProbes counts failed unpaid probes since the endpoint last answered.
	ConsecutiveFailedProbes int    `json:"consecutive_failed_probes"`
	LastProbeError          string `json:"last_probe_error,omitempty"`
	Note                    string `json:"note,omitempty"`
}

// PayToEvidence is the Index's payee evidence for one network and asset.
type PayToEvidence struct {
	Network  string    `json:"network"`
	Asset    string    `json:"asset"`
	Latest   []string  `json:"latest"` // payees of the latest observation (canonical)
	LatestAt time.Time `json:"latest_at,omitzero"`
	// ChangedFrom/ChangedTo/ChangedAt: the newest change within SPEC's seven days, if any.
	ChangedFrom string    `json:"changed_from,omitempty"`
	ChangedTo   string    `json:"changed_to,omitempty"`
	ChangedAt   time.Time `json:"changed_at,omitzero"`
}

// PriceEvidence is the median the price was compared with.
type PriceEvidence struct {
	MedianUSD string `json:"median_usd"`
	Samples   int    `json:"samples"`
	// Samples is the number of prices the median is of: with basis "category" the number of other sites
	// (each counted once), with "own_history" the endpoint's own observed prices.
	Basis    string `json:"basis"` // "category" or "own_history"
	Category string `json:"category,omitempty"`
	// CategoryHosts is the number of other sites in the category's sample with a comparable price (below
	// index.MinCategoryHosts the basis falls back to own_history).
	CategoryHosts int `json:"category_hosts"`
}

// endpointOf is the endpoint the input pays: the resource URL the caller gave (the proxy gives the URL it
// requested), else the challenge's own, normalized for the Index; and the method ("" when not given).
func endpointOf(in *Input) (url, method string) {
	url = endpointKey(in.ResourceURL)
	if ch := in.Challenge; url == "" && ch != nil {
		if ch.Resource != nil {
			url = endpointKey(ch.Resource.URL)
		}
		for i := 0; url == "" && i < len(ch.Accepts); i++ {
			url = endpointKey(ch.Accepts[i].Resource)
		}
	}
	if url == "" {
		return "", ""
	}
	return url, strings.ToUpper(strings.TrimSpace(in.ResourceMethod))
}

// endpointKey is c's Index key, "" when c is empty or has none.
func endpointKey(c string) string {
	if c == "" {
		return ""
	}
	u, err := index.NormalizeURL(c)
	if err != nil {
		return ""
	}
	return u
}

// indexFacts reads the endpoint's observations and derives the Index facts for f's options. Without an
// Index (or for a cart) it gathers nothing and states no evidence.
// The evidence it returns is ev, filled in.
func (e *Engine) indexFacts(ctx context.Context, in *Input, f *policy.Facts, now time.Time, ev *IndexEvidence) *IndexEvidence {
	if e.opts.Index == nil || in.Challenge == nil {
		return nil
	}
	url, method := endpointOf(in)
	if url == "" {
		f.Index = policy.IndexFacts{State: policy.IndexFailed}
		*ev = IndexEvidence{Status: IndexNoEndpoint, DataAsOf: DataUnknown}
		return ev
	}
	*ev = IndexEvidence{URL: url, Method: method, DataAsOf: DataUnknown}
	sum, err := index.Summarize(ctx, e.opts.Index, url, method, now, e.opts.IndexMaxAge)
	if err != nil {
		f.Index = policy.IndexFacts{State: policy.IndexFailed}
		ev.Status, ev.Note = IndexUnavailable, "the Index could not be read: "+err.Error()
		return ev
	}
	ev.Observations = sum.Observations
	if sum.Observations == 0 {
		ev.Status = IndexNoObservations
		f.Index = policy.IndexFacts{State: policy.IndexGathered, Options: make([]policy.OptionIndexFacts, len(f.Options))}
	} else {
		ev.Status = IndexObserved
		ev.DataAsOf = sum.LatestAtRFC3339()
		ev.ConsecutiveFailedProbes, ev.LastProbeError = sum.ConsecutiveFailedProbes, sum.LastProbeError
		f.Index = sum.Facts(f.Options, now)
	}
	e.sitePayees(ctx, url, f, now, ev)
	e.categoryMedians(ctx, in, url, &sum, f, now, ev)
	return ev
}

// sitePayees adds to each option's Index facts whether its payee is new at the endpoint's seller site
// (index.SiteChange): hold_on_payto_change holds it like a payee change at the endpoint itself, so that
// another URL of the same site (a redirect, a link) is no way around the endpoint's payee history. A record
// that cannot be read is noted and is never positive evidence (the endpoint's own history still decides).
func (e *Engine) sitePayees(ctx context.Context, url string, f *policy.Facts, now time.Time, ev *IndexEvidence) {
	sr, ok := e.opts.Index.(index.SitePayeeReader)
	if !ok || !f.Rules.HoldOnPayToChange {
		return
	}
	site := index.SiteOf(url)
	if site == "" {
		return
	}
	entries, err := sr.SitePayees(ctx, site)
	if err != nil {
		ev.Note = "the site payee record could not be read (a payee is compared with the endpoint's own history only): " + err.Error()
		return
	}
	for i, o := range f.Options {
		if i >= len(f.Index.Options) || o.Cart {
			continue
		}
		if c := index.SiteChange(site, entries, o.Network, o.Asset, o.PayTo, now, e.opts.IndexMaxAge); c != nil {
			of := &f.Index.Options[i]
			of.Site, of.SiteOthers, of.SiteSince = c.Site, c.Others, c.Since
		}
	}
}

// categoryMedians replaces the own-history median of every option priced in USD with the median of
// comparable endpoints (index.CategoryMedian: the seller's declared category, same network and asset, each
// other site once, this endpoint's site left out) when at least index.MinCategoryHosts other sites are in
// the sample and its median is not above the endpoint's own-history median (the seller declares its
// category: a category never relaxes its own history's comparison). The category is the one the challenge
// declares, else the one observed. Otherwise the own history stays the basis; a sample that cannot be read
// is noted and never positive evidence.
func (e *Engine) categoryMedians(ctx context.Context, in *Input, url string, sum *index.Summary, f *policy.Facts, now time.Time, ev *IndexEvidence) {
	cr, ok := e.opts.Index.(index.CategoryReader)
	if !ok {
		return
	}
	category := index.ChallengeCategory(in.Challenge)
	if category == "" {
		category = sum.Category
	}
	if category == "" {
		return
	}
	own := index.SiteOf(url)
	for i, o := range f.Options {
		if i >= len(f.Index.Options) || o.Cart || !o.KnownUSDC {
			continue
		}
		sites, err := index.CategorySitePrices(ctx, cr, category, o.Network, o.Asset, now, e.opts.IndexMaxAge)
		if err != nil {
			ev.Note = "the category price sample could not be read (the median is the endpoint's own history): " + err.Error()
			return
		}
		of := &f.Index.Options[i]
		of.Category = category
		m, hosts := sites.MedianExcluding(own)
		of.CategoryHosts = hosts
		if hosts < index.MinCategoryHosts || m == 0 || m > uint64(1<<62) {
			continue
		}
		if of.MedianSamples > 0 && of.MedianUSD > 0 && uint64(of.MedianUSD) < m {
			// The seller declares its category, so it could pick one whose median is above its own prices
			// (or seed one with sites of its own): the category may tighten the comparison its own
			// history makes, never relax it. The lower median stays the basis.
			continue
		}
		of.MedianUSD, of.MedianSamples, of.MedianBasis = policy.USD(m), hosts, "category"
	}
}

// judgedEvidence fills ev with the Index facts about option i (its parts b's).
func judgedEvidence(ev *IndexEvidence, f *policy.Facts, i int, b *resultBlock) {
	if ev == nil || i < 0 || i >= len(f.Index.Options) || i >= len(f.Options) {
		return
	}
	of, o := &f.Index.Options[i], &f.Options[i]
	if len(of.LatestPayTos) > 0 || of.ChangedTo != "" {
		b.payTo = PayToEvidence{Network: o.Network, Asset: o.Asset, Latest: of.LatestPayTos, LatestAt: of.LatestAt,
			ChangedFrom: of.ChangedFrom, ChangedTo: of.ChangedTo, ChangedAt: of.ChangedAt}
		ev.PayTo = &b.payTo
	}
	if of.MedianSamples > 0 {
		b.price = PriceEvidence{MedianUSD: of.MedianUSD.String(), Samples: of.MedianSamples, Basis: of.MedianBasis, Category: of.Category,
			CategoryHosts: of.CategoryHosts}
		ev.Price = &b.price
	}
}
