package proxy

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	goredis "github.com/redis/go-redis/v9"

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
			own := testredis.StartOwn(b, "--appendonly", "yes") // of its own (thousands of unpaid tickets left), as a fleet runs it
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
			admin := goredis.NewClient(&goredis.Options{Addr: own.Addr()})
			defer admin.Close()
			cpu0, reads0 := redisInfo(b, admin, "cpu", "used_cpu_sys", "used_cpu_user"), redisInfo(b, admin, "stats", "total_reads_processed")
			decideConcurrently(b, p, c)
			b.ReportMetric((redisInfo(b, admin, "cpu", "used_cpu_sys", "used_cpu_user")-cpu0)*1e6/float64(b.N), "redis-µs/402")
			// Less than one read per decision: concurrent decisions' scripts shared a round trip (store/redis/batch.go).
			b.ReportMetric((redisInfo(b, admin, "stats", "total_reads_processed")-reads0)/float64(b.N), "reads/402")
		})
	}
}

// redisInfo sums the given fields of INFO section on c: cpu's used_cpu_sys and used_cpu_user (redis-server's
// CPU, all threads, in seconds), stats' total_reads_processed (the reads of client sockets: round trips).
func redisInfo(b *testing.B, c *goredis.Client, section string, fields ...string) float64 {
	info, err := c.Info(context.Background(), section).Result()
	if err != nil {
		b.Fatal(err)
	}
	var sum float64
	for _, line := range strings.Split(info, "\r\n") {
		for _, k := range fields {
			if v, ok := strings.CutPrefix(line, k+":"); ok {
				f, _ := strconv.ParseFloat(v, 64)
				sum += f
			}
		}
	}
	return sum
}

// processCPU is this process's CPU so far (getrusage: user + sys of every thread), in µs.
func processCPU(b *testing.B) float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e3
}

// decideConcurrently runs b.N allowed decisions of the bench challenge through p, c at a time, and reports
// the process's CPU per decision (cpu-µs/402: every goroutine's, the store's background work and the GC
// included; unlike ns/op it moves little with what else the machine runs).
func decideConcurrently(b *testing.B, p *Proxy, c int) {
	decideBench(b, p) // warm: scripts loaded, the day's ledger made
	b.ReportAllocs()
	cpu0 := processCPU(b)
	defer func() { b.ReportMetric((processCPU(b)-cpu0)/float64(b.N), "cpu-µs/402") }()
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
