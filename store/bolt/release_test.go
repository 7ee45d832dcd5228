package bolt_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/payguard/payguard/store"
	"github.com/payguard/payguard/store/bolt"
	"github.com/payguard/payguard/store/storetest"
)

func TestLeases(t *testing.T) {
	storetest.RunLeases(t, func(t *testing.T, now func() time.Time) store.Store {
		s, err := bolt.Open(filepath.Join(t.TempDir(), "payguard.db"), bolt.Options{Now: now})
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}
