package redis_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/payguard/payguard/internal/testredis"
	"github.com/payguard/payguard/store"
	"github.com/payguard/payguard/store/redis"
)

// BenchmarkDecision402 is the Redis side of one allowed 402 as the proxy makes it (issue 36): path=two, the
// day's state and the seller's alarm read, then the leased reservation and its ticket stored (every decision
// before, and a decision that is not a plain allow now); path=ahead, all of it in one script
// (ReserveTicketAhead, a plain allow now); c at a time, against
// a redis-server of its own (appendonly, as a fleet runs it). Beside the time it reports what the goal is
// about on a machine where Redis shares the cores: redis-server's own CPU per decision (INFO cpu, user+sys,
// before and after) and its commands per decision (INFO commandstats), so that a cheaper script is seen as
// such whatever the machine's load.
//
//	go test ./store/redis -run '^$' -bench 'BenchmarkDecision402' -benchtime 20000x
func BenchmarkDecision402(b *testing.B) {
	for _, path := range []string{"two", "ahead"} {
		for _, c := range []int{1, 8} {
			b.Run("path="+path+"/c="+strconv.Itoa(c), func(b *testing.B) {
				own := testredis.StartOwn(b, "--appendonly", "yes")
				if own.Embedded() {
					b.Skip("needs redis-server: the embedded server's CPU is not Redis's")
				}
				ctx := context.Background()
				st, err := redis.Open(ctx, redis.Options{URL: own.URL(), AllowVolatile: true, InitIfEmpty: true})
				if err != nil {
					b.Fatal(err)
				}
				defer st.Close()
				admin := goredis.NewClient(&goredis.Options{Addr: own.Addr()})
				defer admin.Close()
				var seq atomic.Int64
				key := strings.Repeat("ab", 32) // one URL's challenge, as the proxy's sha256 key: every ticket under it
				decide := func() error {
					n := seq.Add(1)
					now := time.Now()
					day := now.UTC().Format("2006-01-02")
					t := store.Ticket{
						ID: fmt.Sprintf("tkt_%032d", n), Key: key, ReceiptID: fmt.Sprintf("rcpt_%032d", n),
						ExpiresAt: now.Add(5 * time.Minute), Option: []byte(`{"scheme":"exact","network":"eip155:84532","amount":"10000"}`),
					}
					if path == "ahead" { // the proxy's plain allow since issue 36: one script
						got, err := st.ReserveTicketAhead(ctx, "default", day, "seller.example", 10_000, 1<<50, t, now)
						if err == nil && !got.Reserved {
							err = fmt.Errorf("not reserved: %+v", got)
						}
						return err
					}
					if _, _, _, err := st.StateAndAlarm(ctx, "default", day, "seller.example", now); err != nil {
						return err
					}
					_, err := st.ReserveTicket(ctx, "default", day, 10_000, 1<<50, t)
					return err
				}
				if err := decide(); err != nil { // warm: scripts loaded, the day's keys made
					b.Fatal(err)
				}
				admin.ConfigResetStat(ctx)
				cpu0 := redisCPU(b, admin)
				b.SetParallelism(c)
				b.ResetTimer()
				if c == 1 {
					for i := 0; i < b.N; i++ {
						if err := decide(); err != nil {
							b.Fatal(err)
						}
					}
				} else {
					b.SetParallelism(c) // GOMAXPROCS × c goroutines; close enough to c for this figure
					b.RunParallel(func(pb *testing.PB) {
						for pb.Next() {
							if err := decide(); err != nil {
								b.Error(err)
								return
							}
						}
					})
				}
				b.StopTimer()
				b.ReportMetric(float64(redisCPU(b, admin)-cpu0)/float64(b.N), "redis-µs/402")
				scripts, calls, usec := commandStats(b, admin)
				b.ReportMetric(float64(scripts)/float64(b.N), "scripts/402")
				b.ReportMetric(float64(calls)/float64(b.N), "calls/402")
				b.ReportMetric(float64(usec)/float64(b.N), "script-µs/402")
			})
		}
	}
}

// redisCPU is redis-server's CPU (user + sys, all threads) in µs.
func redisCPU(b *testing.B, c *goredis.Client) int64 {
	info, err := c.Info(context.Background(), "cpu").Result()
	if err != nil {
		b.Fatal(err)
	}
	var sum float64
	for _, line := range strings.Split(info, "\r\n") {
		for _, k := range []string{"used_cpu_sys:", "used_cpu_user:"} {
			if v, ok := strings.CutPrefix(line, k); ok {
				f, _ := strconv.ParseFloat(v, 64)
				sum += f
			}
		}
	}
	return int64(sum * 1e6)
}

// commandStats sums the calls and usec of the commands clients sent (INFO commandstats), leaving out INFO
// and CONFIG (this benchmark's own), and logs each: scripts are the clients' calls (EVALSHA), calls the
// commands the scripts ran, usec the scripts' time in Redis (their commands' included).
func commandStats(b *testing.B, c *goredis.Client) (scripts, calls, usec int64) {
	info, err := c.Info(context.Background(), "commandstats").Result()
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(info, "\r\n") {
		name, rest, ok := strings.Cut(strings.TrimPrefix(line, "cmdstat_"), ":")
		if !ok || !strings.HasPrefix(line, "cmdstat_") {
			continue
		}
		if name == "info" || strings.HasPrefix(name, "config") || name == "hello" {
			continue
		}
		b.Log(line) // each command's calls and usec_per_call: where a script's time goes (-v)
		for _, kv := range strings.Split(rest, ",") {
			k, v, _ := strings.Cut(kv, "=")
			n, _ := strconv.ParseInt(v, 10, 64)
			switch k {
			case "calls":
				if name == "evalsha" || name == "eval" {
					scripts += n // round trips: every call of a decision is a script
				} else {
					calls += n // the scripts' own commands
				}
			case "usec":
				if name == "evalsha" || name == "eval" {
					usec += n // a script's usec includes its commands'
				}
			}
		}
	}
	return scripts, calls, usec
}
