package index

import (
	"sort"
	"strings"
	"time"

	"github.com/payguard/payguard/internal/evmaddr"
	"github.com/payguard/payguard/policy"
	"github.com/payguard/payguard/store"
	"github.com/payguard/payguard/x402"
)

// maxPricePoints bounds the price points a Summary lists per network and asset (the median uses all).
const maxPricePoints = 20

// Summary is what the Index derives from one endpoint's observations: the facts GET /v1/endpoint serves and
// the Index rules decide on.
type Summary struct {
	URL          string    `json:"url"`
	Method       string    `json:"method,omitempty"` // "" when every method's observations were used
	Observations int       `json:"observations"`
	FirstAt      time.Time `json:"first_observed_at,omitzero"`
	LatestAt     time.Time `json:"latest_observed_at,omitzero"`
	// Live is true when the newest sign of the endpoint (a decodable 402, a paid 2xx, a usable probe) came
	// after any failed probe, false after FailedProbesBeforeHold consecutive failed probes, null otherwise.
	Live                    *bool          `json:"live"`
	ConsecutiveFailedProbes int            `json:"consecutive_failed_probes"`
	LastProbeError          string         `json:"last_probe_error,omitempty"`
	Category                string         `json:"category,omitempty"`
	PayTo                   []PayeeHistory `json:"payto_history"`
	Prices                  []PriceHistory `json:"price_history"`

	// latestAt is latestAtOf in RFC 3339, written once by Derive (the engine states LatestAt on every
	// decision): LatestAtRFC3339 uses it while LatestAt is still that instant.
	latestAt   string
	latestAtOf time.Time
}

// LatestAtRFC3339 is LatestAt.Format(time.RFC3339).
func (s *Summary) LatestAtRFC3339() string {
	if s.latestAt != "" && s.LatestAt.Equal(s.latestAtOf) && s.LatestAt.Location() == s.latestAtOf.Location() {
		return s.latestAt
	}
	return s.LatestAt.Format(time.RFC3339)
}

// PayeeHistory is the payees one network and asset of the endpoint named over time.
type PayeeHistory struct {
	Network   string        `json:"network"`
	Asset     string        `json:"asset"`
	Current   []string      `json:"current"` // payees of the latest observation that named any (canonical)
	CurrentAt time.Time     `json:"current_at"`
	Paid      []string      `json:"paid,omitempty"` // payees a released payment went to
	Changes   []PayeeChange `json:"changes"`        // oldest first
}

// PayeeChange is one observed change of payee.
type PayeeChange struct {
	From string    `json:"from"`
	To   string    `json:"to"`
	At   time.Time `json:"at"`
}

// PriceHistory is the prices one network and asset of the endpoint offered, in atomic units.
type PriceHistory struct {
	Network string       `json:"network"`
	Asset   string       `json:"asset"`
	Samples int          `json:"samples"`
	Median  string       `json:"median"`
	Latest  string       `json:"latest"`
	Points  []PricePoint `json:"points"` // the newest maxPricePoints, oldest first
}

// PricePoint is one observed price.
type PricePoint struct {
	At     time.Time `json:"at"`
	Amount string    `json:"amount"`
}

type assetKey struct{ network, asset string }

func keyOf(network, asset string) assetKey {
	if n, ok := x402.CAIP2(network); ok {
		network = n
	}
	return assetKey{network: network, asset: x402.CanonicalAddress(asset)}
}

// wireKey is keyOf(network, asset) but for the asset's letter case: compare it with a canonical key with
// sameAs, which allocates nothing for an option's checksummed (mixed-case) asset.
func wireKey(network, asset string) wireAssetKey {
	if n, ok := x402.CAIP2(network); ok {
		network = n
	}
	return wireAssetKey{network: network, asset: asset, evm: x402.IsEVMAddress(asset)}
}

// wireAssetKey is a network and asset as an option writes them (wireKey).
type wireAssetKey struct {
	network, asset string
	evm            bool // the asset is an EVM address: its canonical form is its lower case
}

// sameAs reports whether k is the canonical key (network, asset): keyOf of k's parts.
func (k wireAssetKey) sameAs(network, asset string) bool {
	if network != k.network {
		return false
	}
	if k.evm {
		return evmaddr.EqualLower(asset, k.asset)
	}
	return asset == k.asset
}

// Derive summarizes obs (one URL's observations, any order) for method ("" = every method), dropping those
// older than maxAge before now (0 = keep all) and any from the future.
func Derive(url string, obs []store.Observation, method string, now time.Time, maxAge time.Duration) Summary {
	method = strings.ToUpper(method)
	var use []store.Observation
	for _, o := range obs {
		if method != "" && !strings.EqualFold(o.Method, method) {
			continue
		}
		if maxAge > 0 && o.ObservedAt.Before(now.Add(-maxAge)) || o.ObservedAt.After(now.Add(time.Minute)) {
			continue
		}
		use = append(use, o)
	}
	sort.SliceStable(use, func(i, j int) bool { return use[i].ObservedAt.Before(use[j].ObservedAt) })
	s := Summary{URL: url, Method: method, Observations: len(use), PayTo: []PayeeHistory{}, Prices: []PriceHistory{}}
	if len(use) == 0 {
		return s
	}
	s.FirstAt, s.LatestAt = use[0].ObservedAt.UTC(), use[len(use)-1].ObservedAt.UTC()
	s.latestAt, s.latestAtOf = s.LatestAt.Format(time.RFC3339), s.LatestAt

	// Per network and asset, in first-seen order; an endpoint offers a handful, so slices beat maps here.
	var hist []*PayeeHistory
	var prices []*priceAcc
	slot := func(k assetKey) int {
		for i, h := range hist {
			if h.Network == k.network && h.Asset == k.asset {
				return i
			}
		}
		hist = append(hist, &PayeeHistory{Network: k.network, Asset: k.asset, Current: []string{}, Changes: []PayeeChange{}})
		prices = append(prices, &priceAcc{})
		return len(hist) - 1
	}
	type seenHere struct {
		named    []string
		cheapest uint64
		priced   bool
	}
	here := make([]seenHere, 0, 4)
	for _, o := range use {
		if o.Category != "" {
			s.Category = o.Category
		}
		// This observation's payees and cheapest price per network and asset (indexed like hist).
		here = here[:0]
		at := func(i int) *seenHere {
			for len(here) <= i {
				here = append(here, seenHere{})
			}
			return &here[i]
		}
		for _, off := range o.Offers {
			h := at(slot(keyOf(off.Network, off.Asset)))
			if off.PayTo != "" {
				h.named = addSorted(h.named, policy.CanonicalPayee(off.PayTo))
			}
			if off.Scheme == x402.SchemeUpto {
				continue // a maximum, not a price: an upto endpoint's prices are what it settles (below)
			}
			if a, err := x402.ParseAtomic(off.Amount); err == nil && (!h.priced || a < h.cheapest) {
				h.cheapest, h.priced = a, true
			}
		}
		if p := o.Paid; p != nil && p.Scheme == x402.SchemeUpto && p.Settled != "" {
			if a, err := x402.ParseAtomic(p.Settled); err == nil {
				h := at(slot(keyOf(p.Network, p.Asset)))
				if !h.priced || a < h.cheapest {
					h.cheapest, h.priced = a, true
				}
			}
		}
		if p := o.Paid; p != nil && p.PayTo != "" {
			i := slot(keyOf(p.Network, p.Asset))
			payee := policy.CanonicalPayee(p.PayTo)
			hist[i].Paid = addSorted(hist[i].Paid, payee)
			if h := at(i); !contains(hist[i].Current, payee) {
				h.named = addSorted(h.named, payee)
			}
		}
		for i := range here {
			h, seenNow := hist[i], here[i]
			if len(seenNow.named) > 0 {
				if len(h.Current) > 0 && !sameSet(h.Current, seenNow.named) {
					h.Changes = append(h.Changes, PayeeChange{From: strings.Join(h.Current, " "), To: strings.Join(seenNow.named, " "), At: o.ObservedAt.UTC()})
				}
				h.Current, h.CurrentAt = seenNow.named, o.ObservedAt.UTC()
			}
			if seenNow.priced {
				prices[i].add(o.ObservedAt.UTC(), seenNow.cheapest)
			}
		}
	}
	for i, h := range hist {
		s.PayTo = append(s.PayTo, *h)
		if p := prices[i]; len(p.amounts) > 0 {
			s.Prices = append(s.Prices, p.history(assetKey{h.Network, h.Asset}))
		}
	}

	// Liveness, newest first: failed probes count until the newest sign of life.
	for i := len(use) - 1; i >= 0; i-- {
		o := use[i]
		if o.Source == store.SourceProbe && !o.Usable {
			if s.ConsecutiveFailedProbes == 0 {
				s.LastProbeError = o.Error
			}
			s.ConsecutiveFailedProbes++
			continue
		}
		if o.Usable {
			live := true
			s.Live = &live
			break
		}
	}
	if s.ConsecutiveFailedProbes >= policy.FailedProbesBeforeHold {
		live := false
		s.Live = &live
	}
	return s
}

// Facts turns a summary into the policy's Index facts for options (aligned with it), at now.
func (s Summary) Facts(options []policy.Option, now time.Time) policy.IndexFacts {
	f := policy.IndexFacts{State: policy.IndexGathered, FailedProbes: s.ConsecutiveFailedProbes, LastProbeError: s.LastProbeError,
		Options: make([]policy.OptionIndexFacts, len(options))}
	for i := range options {
		if o := &options[i]; !o.Cart {
			f.Options[i] = s.optionFacts(wireKey(o.Network, o.Asset), o, now)
		}
	}
	return f
}

// optionFacts are the facts of option o, whose wireKey is k.
func (s *Summary) optionFacts(k wireAssetKey, o *policy.Option, now time.Time) policy.OptionIndexFacts {
	var of policy.OptionIndexFacts
	for _, h := range s.PayTo {
		if !k.sameAs(h.Network, h.Asset) {
			continue
		}
		of.LatestPayTos, of.LatestAt = h.Current, h.CurrentAt
		for i := len(h.Changes) - 1; i >= 0; i-- {
			if c := h.Changes[i]; !c.At.Before(now.Add(-policy.PayeeChangeWindow)) {
				of.ChangedFrom, of.ChangedTo, of.ChangedAt = c.From, c.To, c.At
				break
			}
		}
	}
	// The median compares USD, so only an asset priced in USD (a known USDC: one atomic unit is one
	// micro-dollar) has one.
	if !o.KnownUSDC {
		return of
	}
	for _, p := range s.Prices {
		if !k.sameAs(p.Network, p.Asset) {
			continue
		}
		if m, err := x402.ParseAtomic(p.Median); err == nil && m <= uint64(1<<62) {
			of.MedianUSD, of.MedianSamples, of.MedianBasis, of.Category = policy.USD(m), p.Samples, "own_history", s.Category
		}
	}
	return of
}

type priceAcc struct {
	at      []time.Time
	amounts []uint64
}

func (p *priceAcc) add(at time.Time, a uint64) {
	p.at = append(p.at, at)
	p.amounts = append(p.amounts, a)
}

func (p *priceAcc) history(k assetKey) PriceHistory {
	h := PriceHistory{Network: k.network, Asset: k.asset, Samples: len(p.amounts), Median: utoa(median(p.amounts)),
		Latest: utoa(p.amounts[len(p.amounts)-1]), Points: []PricePoint{}}
	for i := max(0, len(p.amounts)-maxPricePoints); i < len(p.amounts); i++ {
		h.Points = append(h.Points, PricePoint{At: p.at[i], Amount: utoa(p.amounts[i])})
	}
	return h
}

// median is the lower median: an actual observed price, never an average of two.
func median(a []uint64) uint64 {
	c := append([]uint64(nil), a...)
	sort.Slice(c, func(i, j int) bool { return c[i] < c[j] })
	return c[(len(c)-1)/2]
}

func utoa(v uint64) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + v%10)
		v /= 10
		if v == 0 {
			return string(b[i:])
		}
	}
}

func addSorted(list []string, s string) []string {
	if contains(list, s) {
		return list
	}
	list = append(list, s)
	sort.Strings(list)
	return list
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
