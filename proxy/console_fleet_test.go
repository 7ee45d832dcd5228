package proxy

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/payguard/payguard/internal/testredis"
	"github.com/payguard/payguard/store/redis"
	"github.com/payguard/payguard/x402"
)

// A fleet on Redis: a hold made by one proxy shows in another proxy's console, is approved there, and the
// agent's retry through the first proxy is paid. The console reads the store's holds, not one process's.
func TestConsoleFleetOnRedis(t *testing.T) {
	url := testredis.URL(t)
	prefix := fmt.Sprintf("payguard-console-test-%d-%d:", os.Getpid(), time.Now().UnixNano())
	var first *redis.Store
	open := func() State {
		st, err := redis.Open(t.Context(), redis.Options{URL: url, Prefix: prefix, AllowVolatile: true, InitIfEmpty: true})
		if err != nil {
			t.Fatalf("redis: %v", err)
		}
		if first == nil {
			first = st
			t.Cleanup(func() { dropPrefix(t, st, prefix); st.Close() })
		} else {
			t.Cleanup(func() { st.Close() })
		}
		return st
	}
	s := newSeller(t, x402.V2, false, offer(x402.V2, "eip155:84532", baseSepoliaUSDC, sellerPayTo, halfDollar))
	a := newHarness(t, open(), testRules(), trustUpstream(s))
	b := newHarness(t, open(), testRules(), trustUpstream(s))
	id := heldRequest(t, a, s)

	c := newConsoleClient(t, b.admin.URL)
	if code := c.signIn(testToken); code != 200 {
		t.Fatalf("sign-in: %d", code)
	}
	resp, body := c.get("/console/api/state")
	var st struct {
		Holds []struct{ ID, Status string }
	}
	if err := json.Unmarshal(body, &st); err != nil || resp.StatusCode != 200 || len(st.Holds) != 1 || st.Holds[0].ID != id || st.Holds[0].Status != "pending" {
		t.Fatalf("proxy B's console: %d %s", resp.StatusCode, body)
	}
	if code, out := c.post("/console/api/holds/"+id+"/approve", map[string]string{"by": "alice"}, nil); code != 200 {
		t.Fatalf("approve on proxy B: %d %s", code, out)
	}
	if ex := a.buyer().pay(s.url("/report"), nil); ex.paid == nil || ex.paid.StatusCode != http.StatusOK || s.paid.Load() != 1 {
		t.Fatalf("retry through proxy A after B's approval: first %d, paid %v", ex.first.StatusCode, ex.paid)
	}
}

// dropPrefix deletes the keys a test wrote under prefix in the shared Redis.
func dropPrefix(t *testing.T, st *redis.Store, prefix string) {
	ctx := context.Background()
	iter := st.Client().Scan(ctx, 0, prefix+"*", 1000).Iterator()
	var keys []string
	for iter.Next(ctx) {
		keys = append(keys, iter.Val())
	}
	if len(keys) > 0 {
		if err := st.Client().Del(ctx, keys...).Err(); err != nil {
			t.Errorf("cleaning up %s: %v", prefix, err)
		}
	}
}
