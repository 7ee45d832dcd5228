package proxy

import (
	"bufio"
	"context"
	"encoding/base64"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/elazarl/goproxy"
	goredis "github.com/redis/go-redis/v9"
	bbolt "go.etcd.io/bbolt"

	"github.com/payguard/payguard/internal/testredis"
	"github.com/payguard/payguard/policy"
	"github.com/payguard/payguard/store/bolt"
	"github.com/payguard/payguard/store/redis"
)

// The footprint benchmarks measure what an unpaid 402 leaves in the store, the way issue 36 measured it:
// the proxy decides b.N allowed 402s (the bench challenge at one URL, as proxy-bench's upstream sends it),
// none is paid, and the store's size is read while every ticket is still outstanding. Bytes are exact
// whatever the machine's load; the time per op is not the figure here. Run with a large -benchtime (the
// file's fixed overhead divides by b.N): docs/BENCHMARKS.md has the command.

// decideUnpaid runs b.N allowed decisions of the bench challenge through p.
func decideUnpaid(b *testing.B, p *Proxy) {
	b.Helper()
	for b.Loop() {
		decideBench(b, p)
	}
}

// decideBench is one allowed decision of the bench challenge through p.
func decideBench(b *testing.B, p *Proxy) {
	header := base64.StdEncoding.EncodeToString([]byte(benchChallenge))
	req, _ := http.NewRequest(http.MethodGet, "https://127.0.0.1:18443/402", nil)
	{
		resp := &http.Response{StatusCode: http.StatusPaymentRequired, Header: http.Header{
			"Payment-Required": {header}, "Content-Type": {"application/json; charset=utf-8"}},
			Body: io.NopCloser(strings.NewReader("{}")), Request: req, ProtoMajor: 1, ProtoMinor: 1}
		out := p.onResponse(resp, &goproxy.ProxyCtx{Req: req, UserData: &reqState{start: time.Now()}})
		if out.Header.Get(HeaderDecision) != allow {
			b.Fatalf("decision %q, status %d", out.Header.Get(HeaderDecision), out.StatusCode)
		}
		io.Copy(io.Discard, out.Body)
	}
}

func footprintRules() policy.Rules {
	rules := testRules()
	rules.DailyCapUSD = policy.USD(1_000_000_000_000_000) // the bench never runs out of budget
	return rules
}

// BenchmarkUnpaid402Bolt reports store-B/402: the bytes payguard.db grew by (its journal included) over
// b.N unpaid 402s, divided by b.N; and pages-B/402, the growth of the file's pages in use (its high-water
// mark), which leaves out the room bbolt adds ahead when it grows the file (the file doubles up to 16 MB,
// then grows 16 MB at a time).
func BenchmarkUnpaid402Bolt(b *testing.B) {
	dir := b.TempDir()
	path := filepath.Join(dir, "payguard.db")
	st, err := bolt.Open(path, bolt.Options{})
	if err != nil {
		b.Fatal(err)
	}
	pagesBefore := pagesInUse(b, st, path) // the empty file's buckets
	before := dirBytes(b, dir)
	if st, err = bolt.Open(path, bolt.Options{}); err != nil {
		b.Fatal(err)
	}
	p, _, _ := newTestProxy(b, st, footprintRules(), maxUnpaid(1<<30))
	b.ReportAllocs()
	decideUnpaid(b, p)
	b.StopTimer()
	p.Close()
	pages := pagesInUse(b, st, path) // closed: the journal is applied
	b.ReportMetric(float64(dirBytes(b, dir)-before)/float64(b.N), "store-B/402")
	b.ReportMetric(float64(pages-pagesBefore)/float64(b.N), "pages-B/402")
}

// pagesInUse closes st and reads its file's high-water mark (bbolt's Tx.Size).
func pagesInUse(b *testing.B, st *bolt.Store, path string) int64 {
	b.Helper()
	if err := st.Close(); err != nil {
		b.Fatal(err)
	}
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{ReadOnly: true})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	var n int64
	db.View(func(tx *bbolt.Tx) error { n = tx.Size(); return nil })
	return n
}

// dirBytes is the size of the regular files in dir.
func dirBytes(b *testing.B, dir string) int64 {
	b.Helper()
	var n int64
	entries, err := os.ReadDir(dir)
	if err != nil {
		b.Fatal(err)
	}
	for _, e := range entries {
		if fi, err := e.Info(); err == nil && fi.Mode().IsRegular() && filepath.Ext(e.Name()) != ".pem" {
			n += fi.Size()
		}
	}
	return n
}

// BenchmarkUnpaid402Redis reports, on a Redis of its own: store-B/402, the growth of Redis's used_memory
// over b.N unpaid 402s divided by b.N; and rtt/decision, the commands the proxy's connection sent per
// decision (read with MONITOR, commands run inside a script not counted: one EVALSHA is one round trip).
func BenchmarkUnpaid402Redis(b *testing.B) {
	own := testredis.StartOwn(b)
	if own.Embedded() {
		b.Skip("needs redis-server: the embedded server's memory is not Redis's")
	}
	ctx := context.Background()
	st, err := redis.Open(ctx, redis.Options{URL: own.URL(), AllowVolatile: true, InitIfEmpty: true})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	p, _, _ := newTestProxy(b, st, footprintRules(), maxUnpaid(1<<30))
	defer p.Close()
	admin := goredis.NewClient(&goredis.Options{Addr: own.Addr()})
	defer admin.Close()
	decideBench(b, p) // warm: scripts loaded, the day's ledger keys made
	before := usedMemory(b, admin)
	cmds, stop := monitor(b, own.Addr())
	b.ReportAllocs()
	decideUnpaid(b, p)
	b.StopTimer()
	time.Sleep(50 * time.Millisecond) // MONITOR's last lines
	stop()
	b.ReportMetric(float64(usedMemory(b, admin)-before)/float64(b.N), "store-B/402")
	b.ReportMetric(float64(cmds.Load())/float64(b.N), "rtt/decision")
}

func usedMemory(b *testing.B, c *goredis.Client) int64 {
	b.Helper()
	info, err := c.Info(context.Background(), "memory").Result()
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, "used_memory:"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				b.Fatal(err)
			}
			return n
		}
	}
	b.Fatal("no used_memory in INFO memory")
	return 0
}

// monitor counts the commands clients send to the Redis at addr (MONITOR lines not from a script) until
// stop is called.
func monitor(b *testing.B, addr string) (*atomic.Int64, func()) {
	b.Helper()
	var n atomic.Int64
	raw, err := net.DialTimeout("tcp", addr, 3*time.Second)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := raw.Write([]byte("MONITOR\r\n")); err != nil {
		b.Fatal(err)
	}
	r := bufio.NewReader(raw)
	if line, err := r.ReadString('\n'); err != nil || !strings.HasPrefix(line, "+OK") {
		b.Fatalf("MONITOR: %q %v", line, err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			// +1700000000.123456 [0 127.0.0.1:5555] "evalsha" ...; a script's own calls say [0 lua].
			if strings.HasPrefix(line, "+") && !strings.Contains(line, " lua] ") {
				n.Add(1)
			}
		}
	}()
	return &n, func() { raw.Close(); <-done }
}
