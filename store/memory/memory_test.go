package memory_test

import (
	"testing"

	"github.com/payguard/payguard/store"
	"github.com/payguard/payguard/store/memory"
	"github.com/payguard/payguard/store/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return memory.New() })
}
