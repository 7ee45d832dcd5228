package proxy

import (
	"context"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/payguard/payguard/internal/testredis"
	"github.com/payguard/payguard/store/bolt"
	"github.com/payguard/payguard/store/redis"
)

// BenchmarkDecide402 is the whole 402 path in process (decode, decision, reservation with its ticket,
// narrowing, observation, log line) on the stores a deployment uses, by c goroutines at once on one budget:
// c=1 is one agent's latency, c=8 the rate at which concurrent decisions share the budget (issue 36, goal 1).
// Profile it (-cpuprofile, -memprofile, -mutexprofile, -blockprofile) to see where a decided 402 goes;
// docs/benchmarks/proxy.md has the commands and the figures.
func BenchmarkDecide402(b *testing.B) {
	for _, c := range []int{1, 8} {
		b.Run("store=bolt/c="+strconv.Itoa(c), func(b *testing.B) {
			st, err := bolt.Open(filepath.Join(b.TempDir(), "payguard.db"), bolt.Options{})
			if err != nil {
				b.Fatal(err)
			}
			p, _, _ := newTestProxy(b, st, footprintRules(), maxUnpaid(1<<30))
			defer p.Close()
			decideConcurrently(b, p, c)
		})
		b.Run("store=redis/c="+strconv.Itoa(c), func(b *testing.B) {
			own := testredis.StartOwn(b) // a Redis of its own: the bench leaves thousands of unpaid tickets
			if own.Embedded() {
				b.Skip("needs redis-server: the embedded server's round trips are not Redis's")
			}
			st, err := redis.Open(context.Background(), redis.Options{URL: own.URL(), AllowVolatile: true, InitIfEmpty: true})
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			p, _, _ := newTestProxy(b, st, footprintRules(), maxUnpaid(1<<30))
			defer p.Close()
			decideConcurrently(b, p, c)
		})
	}
}

// decideConcurrently runs b.N allowed decisions of the bench challenge through p, c at a time.
func decideConcurrently(b *testing.B, p *Proxy, c int) {
	decideBench(b, p) // warm: scripts loaded, the day's ledger made
	b.ReportAllocs()
	b.ResetTimer()
	b.SetParallelism((c + 1) / 2) // RunParallel starts GOMAXPROCS × this goroutines
	if c == 1 {
		for i := 0; i < b.N; i++ {
			decideBench(b, p)
		}
		return
	}
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			decideBench(b, p)
		}
	})
}
