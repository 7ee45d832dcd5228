package app

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/payguard/payguard/config"
	"github.com/payguard/payguard/store"
	"github.com/payguard/payguard/store/memory"
)

// unhealthyStore is a store whose health check fails naming its file, as bolt's do.
type unhealthyStore struct {
	store.Store
	err error
}

func (u unhealthyStore) Healthy(context.Context) error { return u.err }

// The store's health on the public listener keeps the reason and drops the file's path and directory.
func TestPublicStoreHealthNamesNoPath(t *testing.T) {
	dir := t.TempDir()
	cfg, err := config.Default()
	if err != nil {
		t.Fatal(err)
	}
	cfg.Store.Path = filepath.Join(dir, "data", "payguard.db")
	cfg.DataDir = filepath.Join(dir, "data")
	st := unhealthyStore{Store: memory.New(), err: errors.New("store/bolt: writing " + cfg.Store.Path +
		"-journal: no space left on device (in " + filepath.Dir(cfg.Store.Path) + ")")}
	got := publicStoreHealth(st, cfg)(context.Background())
	if got == nil || strings.Contains(got.Error(), dir) || !strings.Contains(got.Error(), "no space left on device") ||
		!strings.Contains(got.Error(), "<store path>-journal") {
		t.Fatalf("public store health: %v", got)
	}
	if publicStoreHealth(unhealthyStore{Store: memory.New()}, cfg)(context.Background()) != nil {
		t.Fatal("a healthy store reported an error")
	}
}
