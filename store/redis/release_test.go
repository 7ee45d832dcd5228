package redis_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/payguard/payguard/store"
	"github.com/payguard/payguard/store/redis"
	"github.com/payguard/payguard/store/storetest"
)

func TestLeases(t *testing.T) {
	storetest.RunLeases(t, func(t *testing.T, now func() time.Time) store.Store {
		prefix := fmt.Sprintf("%s%d:", runPrefix, storeSeq.Add(1))
		opts := testOptions(prefix)
		opts.Now = now
		s, err := redis.Open(context.Background(), opts)
		if err != nil {
			t.Fatalf("opening the redis store at %s: %v", redisURL(), err)
		}
		t.Cleanup(func() { cleanPrefix(t, prefix) })
		return s
	})
}
