package bolt

import (
	"context"

	"go.etcd.io/bbolt"

	"github.com/payguard/payguard/store"
)

// MarkSeller implements store.Sellers: one write transaction (possibly shared, see write), only for a host
// not yet remembered. The bucket's key count (bbolt keeps it per page, read in the transaction) bounds it.
func (s *Store) MarkSeller(ctx context.Context, host string) error {
	if err := store.CheckName("seller host", host); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if known, err := s.IsSeller(ctx, host); err != nil || known {
		return err
	}
	return s.write(func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucketSellers)
		if b.Get([]byte(host)) != nil || b.Stats().KeyN >= store.MaxSellerHosts {
			return nil
		}
		return b.Put([]byte(host), []byte{})
	})
}

// IsSeller implements store.Sellers in one read transaction.
func (s *Store) IsSeller(ctx context.Context, host string) (bool, error) {
	if err := store.CheckName("seller host", host); err != nil {
		return false, err
	}
	if err := ctx.Err(); err != nil {
		return false, err
	}
	known := false
	err := s.db.View(func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucketSellers)
		known = b.Get([]byte(host)) != nil || b.Stats().KeyN >= store.MaxSellerHosts
		return nil
	})
	return known, err
}
