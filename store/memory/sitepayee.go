package memory

import (
	"context"

	"github.com/payguard/payguard/store"
)

// PutSitePayee implements store.SitePayees.
func (s *Store) PutSitePayee(ctx context.Context, site string, p store.SitePayee, keep store.Retention) error {
	if err := store.CheckSitePayee(site, p); err != nil {
		return err
	}
	if err := store.CheckRetention(keep); err != nil {
		return err
	}
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.mu.Unlock()
	p.FirstAt, p.LastAt = p.FirstAt.UTC(), p.LastAt.UTC()
	m := s.sitePayees[site]
	if m == nil {
		m = map[string]store.SitePayee{}
		s.sitePayees[site] = m
	}
	list := make([]store.SitePayee, 0, len(m))
	for _, x := range m {
		list = append(list, x)
	}
	merged, removed := store.TrimSitePayees(list, p, keep)
	for _, k := range removed {
		delete(m, k)
	}
	m[merged.Key()] = merged
	return nil
}

// SitePayees implements store.SitePayees.
func (s *Store) SitePayees(ctx context.Context, site string) ([]store.SitePayee, error) {
	if err := s.lock(ctx); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	out := make([]store.SitePayee, 0, len(s.sitePayees[site]))
	for _, x := range s.sitePayees[site] {
		out = append(out, x)
	}
	return out, nil
}

var _ store.SitePayees = (*Store)(nil)
