package bolt

import (
	"context"
	"encoding/json"
	"fmt"

	"go.etcd.io/bbolt"

	"github.com/payguard/payguard/store"
)

// PutCategoryPrice implements store.CategoryPrices in one write transaction: the category's entries (at
// most store.MaxCategoryEndpoints) are read, trimmed and rewritten where they changed.
func (s *Store) PutCategoryPrice(ctx context.Context, category string, p store.CategoryPrice, keep store.Retention) error {
	if err := store.CheckCategoryPrice(category, p); err != nil {
		return err
	}
	if err := store.CheckRetention(keep); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	p.At = p.At.UTC()
	v, err := json.Marshal(p)
	if err != nil {
		return err
	}
	return s.write(func(tx *bbolt.Tx) error {
		b, err := tx.Bucket(bucketCatPrices).CreateBucketIfNotExists([]byte(category))
		if err != nil {
			return err
		}
		list, err := readCategory(b)
		if err != nil {
			return err
		}
		_, removed := store.TrimCategory(list, p, keep)
		for _, u := range removed {
			if err := b.Delete([]byte(u)); err != nil {
				return err
			}
		}
		return b.Put([]byte(p.URL), v)
	})
}

// CategoryPrices implements store.CategoryPrices in one read transaction.
func (s *Store) CategoryPrices(ctx context.Context, category string) ([]store.CategoryPrice, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := []store.CategoryPrice{}
	err := s.db.View(func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucketCatPrices).Bucket([]byte(category))
		if b == nil {
			return nil
		}
		var err error
		out, err = readCategory(b)
		return err
	})
	return out, err
}

func readCategory(b *bbolt.Bucket) ([]store.CategoryPrice, error) {
	var out []store.CategoryPrice
	err := b.ForEach(func(k, v []byte) error {
		var p store.CategoryPrice
		if err := json.Unmarshal(v, &p); err != nil {
			return fmt.Errorf("store/bolt: category price of %s is corrupt: %w", k, err)
		}
		out = append(out, p)
		return nil
	})
	if out == nil {
		out = []store.CategoryPrice{}
	}
	return out, err
}

var _ store.CategoryPrices = (*Store)(nil)
