package app

import (
	"context"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// serveHeapHeadroom is how far `payguard serve`'s heap may grow over what is live before a collection
// starts, when GOGC is not set: the collector's target is the live heap plus this, not a multiple of it.
//
// Why: the live heap is mostly the sanctions index, which stays, while a preflight's allocations (about
// 30 KB, most of them the ES256 signature's and the input's) die at once. How often the collector runs
// depends on the room it has for them, not on the size of the index; a target that is a multiple of the
// live heap (Go's default GOGC=100, or the 400 serve used before) spends memory in proportion to the index
// (at 400, 150 MB of RSS for a 30 MB index) and gives a small index too little room. 16 MiB is a
// collection every ~500 preflights (ten a second at 5,000/s, each marking a live heap of ~11 MB, most of it
// the sanctions index's pointer-free arrays). docs/benchmarks/server.md, "Garbage
// collector target", has the figures. GOGC and GOMEMLIMIT set by the operator win, as for any Go program.
const serveHeapHeadroom = 16 << 20

// proxyHeapHeadroom is the same for `payguard proxy`. Its live heap is also mostly the sanctions index
// (~12 MB), and a decided 402 allocates about 30 KB that dies at once; at Go's default (GOGC=100: room equal
// to the live heap) it collected every ~400 decided 402s, each cycle marking that live heap for 4-6 ms of
// wall clock on two busy cores, and the slowest requests at c=1 were those a cycle overlapped
// (docs/benchmarks/proxy.md, "latency": in a trace of the slowest 0.5% of 402s at c=1, 40% of their time
// was spent while a cycle marked). 20 MiB of room instead of ~12 cuts the cycles by ~40% (for pass-through
// requests too) and keeps the proxy's resident memory within its goals (≤ 48 MB idle, ≤ 64 MB after 100,000
// decisions at the default unpaid bound); 24 MiB reached 63.0 MB there, too close. The same section has
// the figures.
const proxyHeapHeadroom = 20 << 20

// The percent tuneGC sets (serve and proxy) stays within these: below 25 a large heap would be collected very often, and above
// 400 the runtime's own heuristics (the first cycles, stack and globals scanning) are no longer sized well.
const (
	minGCPercent = 25
	maxGCPercent = 400
)

// gcRetuneEvery is how often the target follows the live heap (a sanctions refresh changes it).
const gcRetuneEvery = 10 * time.Second

// gcPercentFor is the GOGC that gives a live heap of live bytes headroom bytes of room.
func gcPercentFor(live, headroom uint64) int {
	if live == 0 {
		return maxGCPercent
	}
	p := headroom * 100 / live
	return int(min(max(p, minGCPercent), maxGCPercent))
}

// liveHeap is the heap the last collection found live.
func liveHeap() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// tuneServeGC is tuneGC for serve, tuneProxyGC for the proxy.
func tuneServeGC(ctx context.Context) int { return tuneGC(ctx, serveHeapHeadroom) }
func tuneProxyGC(ctx context.Context) int { return tuneGC(ctx, proxyHeapHeadroom) }

// tuneGC sets the collector's target to the live heap plus headroom unless the environment sets GOGC, and
// keeps it there until ctx ends; it reports the percent it set (or the one in force). Call it after the
// first load of the sanctions list: it collects once, so the load's garbage is neither counted as live nor
// kept.
func tuneGC(ctx context.Context, headroom uint64) int {
	if _, set := os.LookupEnv("GOGC"); set {
		p := debug.SetGCPercent(100) // read the current value back...
		debug.SetGCPercent(p)        // ...and keep it
		return p
	}
	runtime.GC()
	p := gcPercentFor(liveHeap(), headroom)
	debug.SetGCPercent(p)
	go func() {
		t := time.NewTicker(gcRetuneEvery)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if q := gcPercentFor(liveHeap(), headroom); q != p {
					p = q
					debug.SetGCPercent(p)
				}
			}
		}
	}()
	return p
}
