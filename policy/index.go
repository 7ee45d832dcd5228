package policy

import (
	"fmt"
	"math"
	"math/big"
	"time"

	"github.com/payguard/payguard/internal/evmaddr"
)

// This file is the three Endpoint Index rules (SPEC's Rules table: max_price_multiple, require_live,
// hold_on_payto_change). Their evidence is gathered by the engine from the store's observations (package
// index) and handed in as IndexFacts; Evaluate reads no store. SPEC: missing Index evidence is never positive
// evidence, so an unknown fact adds no reason, and no Index rule ever blocks.

// PayeeChangeWindow is SPEC's observed-payee-change window.
const PayeeChangeWindow = 7 * 24 * time.Hour

// FailedProbesBeforeHold is SPEC's number of failed unpaid probes before require_live holds.
const FailedProbesBeforeHold = 3

// IndexState says whether Index facts were gathered.
type IndexState int

const (
	IndexNotGathered IndexState = iota // no Index configured, or a cart: the rules have no evidence
	IndexGathered                      // observations were read (possibly none: then every fact is unknown)
	IndexFailed                        // the Index could not be read: unknown, stated in index_evidence
)

// IndexFacts are what the Index knows about the endpoint being paid.
type IndexFacts struct {
	State IndexState
	// Options are per-option facts, aligned with Facts.Options (nil or shorter: unknown).
	Options []OptionIndexFacts
	// FailedProbes is the number of consecutive failed unpaid probes, newest first, counted up to the newest
	// sign of life (a usable probe or a 402 the proxy decoded).
	FailedProbes int
	// LastProbeError is the newest failed probe's error.
	LastProbeError string
}

// OptionIndexFacts is the Index's evidence about one option's network and asset on this endpoint.
type OptionIndexFacts struct {
	// LatestPayTos are the payees the endpoint offered for this network and asset in its latest observation
	// that offered any (canonical form); empty when it never did.
	LatestPayTos []string
	LatestAt     time.Time
	// ChangedFrom/ChangedTo/ChangedAt are the newest payee change for this network and asset observed
	// within PayeeChangeWindow of the decision (ChangedTo empty when none).
	ChangedFrom, ChangedTo string
	ChangedAt              time.Time
	// MedianUSD is the median price of comparable offers (MedianSamples of them; 0 samples: unknown);
	// MedianBasis says what was compared: "category" (endpoints in the seller's category) or "own_history"
	// (this endpoint's earlier offers).
	MedianUSD     USD
	MedianSamples int
	MedianBasis   string
	Category      string
	// CategoryHosts is the number of other sites with a comparable price in Category's sample (the basis
	// is "category" only from index.MinCategoryHosts of them; MedianSamples is then this number).
	CategoryHosts int
	// SiteOthers, when not empty, says the option's payee is new at the endpoint's seller site (Site)
	// within PayeeChangeWindow: the site named these other payees (canonical) for this network and asset
	// before it, since SiteSince (index.SiteChange).
	Site       string
	SiteOthers []string
	SiteSince  time.Time
}

// indexReasons applies the Index rules to the judged option.
func indexReasons(f *Facts, payee int) []Reason {
	r := &f.Rules
	var out []Reason
	if m := r.MaxPriceMultiple; m != nil && (math.IsNaN(*m) || math.IsInf(*m, 0) || *m <= 0) {
		// Rules built in code can skip Validate; a multiple that cannot be compared holds, saying so.
		out = append(out, reasonInvalidIndexRule(fmt.Sprintf("max_price_multiple %v must be a positive number or null", *m)))
	}
	x := &f.Index
	if x.State != IndexGathered || payee < 0 || payee >= len(f.Options) {
		return out
	}
	o := &f.Options[payee]
	if r.RequireLive && x.FailedProbes >= FailedProbesBeforeHold {
		out = append(out, reasonEndpointFailed(x.FailedProbes, x.LastProbeError))
	}
	if payee >= len(x.Options) {
		return out
	}
	of := &x.Options[payee]
	if r.HoldOnPayToChange && o.PayTo != "" {
		switch {
		case len(of.LatestPayTos) > 0 && !containsCanonical(of.LatestPayTos, o.PayTo):
			out = append(out, reasonPayToChanged(fmt.Sprintf("payTo %s differs from %s offered for %s/%s at %s",
				o.PayTo, joinPayees(of.LatestPayTos), o.Network, o.Asset, of.LatestAt.UTC().Format(time.RFC3339))))
		case of.ChangedTo != "":
			out = append(out, reasonPayToChanged(fmt.Sprintf("payTo changed from %s to %s for %s/%s at %s (within 7 days)",
				of.ChangedFrom, of.ChangedTo, o.Network, o.Asset, of.ChangedAt.UTC().Format(time.RFC3339))))
		case len(of.SiteOthers) > 0:
			out = append(out, reasonPayToChanged(fmt.Sprintf("payTo %s is new at site %s for %s/%s, which named %s since %s (within 7 days)",
				o.PayTo, of.Site, o.Network, o.Asset, joinSome(of.SiteOthers, 3), of.SiteSince.UTC().Format(time.RFC3339))))
		}
	}
	if m := r.MaxPriceMultiple; m != nil && *m > 0 && !math.IsInf(*m, 0) && o.Priced() && of.MedianSamples > 0 && of.MedianUSD > 0 {
		if aboveMultiple(o.USD, of.MedianUSD, *m) {
			basis := fmt.Sprintf("%s, %d samples", of.MedianBasis, of.MedianSamples)
			if of.MedianBasis == "category" {
				// Samples of a category are other sites, each counted once.
				basis = fmt.Sprintf("category %s, %d other hosts", of.Category, of.MedianSamples)
			}
			out = append(out, reasonPriceAboveMedian(fmt.Sprintf("$%s is more than %sx the median $%s (%s)",
				o.USD, trimFloat(*m), of.MedianUSD, basis)))
		}
	}
	return out
}

// aboveMultiple reports price > multiple × median exactly, so no rounding decides the hold. In floating
// point the two sides are off by a few parts in 10^16 at most (three roundings), so when they are further
// apart than a part in 10^9 plus one micro-dollar the comparison in floats is the exact one's answer; only
// a price that close to the limit (or an unusual input) is compared exactly, with the multiple turned into
// an exact rational (math/big allocates about ten times: issue 36).
func aboveMultiple(price, median USD, multiple float64) bool {
	if price >= 0 && median > 0 && multiple > 0 {
		p, limit := float64(price), multiple*float64(median)
		switch {
		case p > limit*(1+1e-9)+1:
			return true
		case p < limit*(1-1e-9)-1:
			return false
		}
	}
	return aboveMultipleExact(price, median, multiple)
}

// aboveMultipleExact is aboveMultiple in exact rationals.
func aboveMultipleExact(price, median USD, multiple float64) bool {
	limit := new(big.Rat).Mul(new(big.Rat).SetFloat64(multiple), new(big.Rat).SetInt64(int64(median)))
	return new(big.Rat).SetInt64(int64(price)).Cmp(limit) > 0
}

func trimFloat(f float64) string { return fmt.Sprintf("%g", f) }

// containsCanonical is contains(list, canonicalPayee(payTo)), without writing the canonical form.
func containsCanonical(list []string, payTo string) bool {
	if !evmaddr.Is(payTo) {
		return contains(list, payTo)
	}
	for _, x := range list {
		if evmaddr.EqualLower(x, payTo) {
			return true
		}
	}
	return false
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// joinSome is joinPayees of the first n of list, saying how many more there are.
func joinSome(list []string, n int) string {
	if len(list) <= n {
		return joinPayees(list)
	}
	return fmt.Sprintf("%s and %d more", joinPayees(list[:n]), len(list)-n)
}

func joinPayees(list []string) string {
	s := list[0]
	for _, x := range list[1:] {
		s += " or " + x
	}
	return s
}

// CanonicalPayee is the form payees are compared in: an EVM address in lower case (EVM addresses ignore
// letter case, SPEC), any other identifier as given.
func CanonicalPayee(s string) string { return canonicalPayee(s) }

func canonicalPayee(s string) string { return evmaddr.Canonical(s) }
