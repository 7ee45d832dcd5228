package bolt

import (
	"context"
	"encoding/json"
	"fmt"

	"go.etcd.io/bbolt"

	"github.com/payguard/payguard/store"
)

// PutSitePayee implements store.SitePayees in one write transaction: the site's entries (at most
// store.MaxSitePayees) are read, merged, trimmed and rewritten where they changed.
func (s *Store) PutSitePayee(ctx context.Context, site string, p store.SitePayee, keep store.Retention) error {
	if err := store.CheckSitePayee(site, p); err != nil {
		return err
	}
	if err := store.CheckRetention(keep); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	p.FirstAt, p.LastAt = p.FirstAt.UTC(), p.LastAt.UTC()
	return s.write(func(tx *bbolt.Tx) error {
		b, err := tx.Bucket(bucketSitePayees).CreateBucketIfNotExists([]byte(site))
		if err != nil {
			return err
		}
		list, err := readSitePayees(b)
		if err != nil {
			return err
		}
		merged, removed := store.TrimSitePayees(list, p, keep)
		for _, k := range removed {
			if err := b.Delete([]byte(k)); err != nil {
				return err
			}
		}
		v, err := json.Marshal(merged)
		if err != nil {
			return err
		}
		return b.Put([]byte(merged.Key()), v)
	})
}

// SitePayees implements store.SitePayees in one read transaction.
func (s *Store) SitePayees(ctx context.Context, site string) ([]store.SitePayee, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := []store.SitePayee{}
	err := s.db.View(func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucketSitePayees).Bucket([]byte(site))
		if b == nil {
			return nil
		}
		var err error
		out, err = readSitePayees(b)
		return err
	})
	return out, err
}

func readSitePayees(b *bbolt.Bucket) ([]store.SitePayee, error) {
	out := []store.SitePayee{}
	err := b.ForEach(func(k, v []byte) error {
		var p store.SitePayee
		if err := json.Unmarshal(v, &p); err != nil {
			return fmt.Errorf("store/bolt: site payee %s is corrupt: %w", k, err)
		}
		out = append(out, p)
		return nil
	})
	return out, err
}

var _ store.SitePayees = (*Store)(nil)
