package store

import (
	"context"
	"fmt"
	"sort"
	"time"
)

// The category price sample: what the Index compares an endpoint's price with under max_price_multiple
// (docs/SPEC.md §7.3, docs/index.md). Each endpoint whose seller declares a bazaar/discovery category has one
// entry in that category: its latest cheapest price per network and asset. The sample is bounded so that a
// seller cannot fill it: at most MaxCategoryEndpoints entries per category (the oldest entry goes first) and
// at most MaxCategoryURLsPerHost per host (a host's new URL replaces its oldest); entries older than the
// retention's MaxAge before the newest put are dropped. The median itself counts each host once (package
// index), so the per-host bound only limits how much of the sample one host can occupy.
const (
	MaxCategoryEndpoints   = 256
	MaxCategoryURLsPerHost = 4
	MaxCategoryOffers      = 8 // network-and-asset prices per entry
)

// CategoryPrice is one endpoint's entry in its category's price sample.
type CategoryPrice struct {
	URL  string    `json:"url"`  // normalized endpoint URL
	Host string    `json:"host"` // its site (index.SiteOf: registrable domain, else host name): counted once
	At   time.Time `json:"at"`
	// Offers are the endpoint's cheapest price per network and asset (PayTo empty).
	Offers []Offer `json:"offers"`
}

// CategoryPrices stores the per-category price sample. PutCategoryPrice replaces p.URL's entry in category
// and applies the bounds above and keep.MaxAge; CategoryPrices returns a category's entries (any order; an
// empty slice for an unknown category). Readers also drop entries older than their MaxAge.
type CategoryPrices interface {
	PutCategoryPrice(ctx context.Context, category string, p CategoryPrice, keep Retention) error
	CategoryPrices(ctx context.Context, category string) ([]CategoryPrice, error)
}

// CheckCategoryPrice validates a put.
func CheckCategoryPrice(category string, p CategoryPrice) error {
	if category == "" || len(category) > MaxObservationCategory {
		return fmt.Errorf("%w: category of %d bytes (1 to %d)", ErrInvalid, len(category), MaxObservationCategory)
	}
	if p.URL == "" || len(p.URL) > MaxNameBytes {
		return fmt.Errorf("%w: category price URL of %d bytes (1 to %d)", ErrInvalid, len(p.URL), MaxNameBytes)
	}
	if err := CheckName("category price host", p.Host); err != nil {
		return err
	}
	if p.At.IsZero() {
		return fmt.Errorf("%w: category price of %s has no time", ErrInvalid, p.URL)
	}
	if len(p.Offers) == 0 || len(p.Offers) > MaxCategoryOffers {
		return fmt.Errorf("%w: category price of %s has %d offers (1 to %d)", ErrInvalid, p.URL, len(p.Offers), MaxCategoryOffers)
	}
	for _, f := range p.Offers {
		if err := CheckOffer(f); err != nil {
			return err
		}
	}
	return nil
}

// TrimCategory is the category sample list after putting p: p replaces p.URL's entry, entries older than
// keep.MaxAge before p.At go, then p.Host's oldest past MaxCategoryURLsPerHost, then the oldest past
// MaxCategoryEndpoints. It returns the kept entries (newest last) and the URLs removed from list.
func TrimCategory(list []CategoryPrice, p CategoryPrice, keep Retention) (kept []CategoryPrice, removed []string) {
	kept = make([]CategoryPrice, 0, len(list)+1)
	for _, x := range list {
		switch {
		case x.URL == p.URL:
		case keep.MaxAge > 0 && x.At.Before(p.At.Add(-keep.MaxAge)):
			removed = append(removed, x.URL)
		default:
			kept = append(kept, x)
		}
	}
	sort.SliceStable(kept, func(i, j int) bool { return kept[i].At.Before(kept[j].At) })
	kept = append(kept, p)
	n := 0
	for _, x := range kept {
		if x.Host == p.Host {
			n++
		}
	}
	for i := 0; n > MaxCategoryURLsPerHost && i < len(kept); {
		if kept[i].Host == p.Host && kept[i].URL != p.URL {
			removed = append(removed, kept[i].URL)
			kept = append(kept[:i], kept[i+1:]...)
			n--
			continue
		}
		i++
	}
	if over := len(kept) - MaxCategoryEndpoints; over > 0 {
		for _, x := range kept[:over] {
			removed = append(removed, x.URL)
		}
		kept = kept[over:]
	}
	return kept, removed
}
