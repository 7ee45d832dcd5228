package memory

import (
	"context"

	"github.com/payguard/payguard/store"
)

// PutCategoryPrice implements store.CategoryPrices.
func (s *Store) PutCategoryPrice(ctx context.Context, category string, p store.CategoryPrice, keep store.Retention) error {
	if err := store.CheckCategoryPrice(category, p); err != nil {
		return err
	}
	if err := store.CheckRetention(keep); err != nil {
		return err
	}
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.mu.Unlock()
	p.At = p.At.UTC()
	p.Offers = append([]store.Offer(nil), p.Offers...)
	s.catPrices[category], _ = store.TrimCategory(s.catPrices[category], p, keep)
	return nil
}

// CategoryPrices implements store.CategoryPrices.
func (s *Store) CategoryPrices(ctx context.Context, category string) ([]store.CategoryPrice, error) {
	if err := s.lock(ctx); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	out := make([]store.CategoryPrice, 0, len(s.catPrices[category]))
	for _, p := range s.catPrices[category] {
		p.Offers = append([]store.Offer(nil), p.Offers...)
		out = append(out, p)
	}
	return out, nil
}

var _ store.CategoryPrices = (*Store)(nil)
