package memory_test

import (
	"testing"
	"time"

	"github.com/payguard/payguard/store"
	"github.com/payguard/payguard/store/memory"
	"github.com/payguard/payguard/store/storetest"
)

func TestLeases(t *testing.T) {
	storetest.RunLeases(t, func(t *testing.T, now func() time.Time) store.Store { return memory.NewWithClock(now) })
}
