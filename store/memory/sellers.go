package memory

import (
	"context"

	"github.com/payguard/payguard/store"
)

// MarkSeller implements store.Sellers.
func (s *Store) MarkSeller(ctx context.Context, host string) error {
	if err := store.CheckName("seller host", host); err != nil {
		return err
	}
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.mu.Unlock()
	if len(s.sellers) < store.MaxSellerHosts {
		s.sellers[host] = struct{}{}
	}
	return nil
}

// IsSeller implements store.Sellers.
func (s *Store) IsSeller(ctx context.Context, host string) (bool, error) {
	if err := store.CheckName("seller host", host); err != nil {
		return false, err
	}
	if err := s.lock(ctx); err != nil {
		return false, err
	}
	defer s.mu.Unlock()
	_, ok := s.sellers[host]
	return ok || len(s.sellers) >= store.MaxSellerHosts, nil
}
