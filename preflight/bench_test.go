//go:build unix

package preflight

import (
	"context"
	"syscall"
	"testing"
	"time"
)

// cpuTime is the process's user+system CPU time. Benchmarks report it per operation next to ns/op because
// the shared 2-core machine is often oversubscribed: wall time then counts time spent waiting for a core,
// CPU time does not.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
}

// BenchmarkDecide: a v2 challenge with four options, default rules, in-memory screening fakes, receipt
// signing (ES256) included. The input is parsed once, outside the loop.
func BenchmarkDecide(b *testing.B) {
	h := newHarness(b)
	in, err := ParseInput(fourOptionInput(""))
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	start := cpuTime()
	for b.Loop() {
		res, err := h.engine.Decide(ctx, in)
		if err != nil || res.Decision != "allow" {
			b.Fatalf("%v %v", err, res)
		}
	}
	reportCPU(b, start)
}

// BenchmarkParseInput: the same input's bounded parse (limits, x402 decode, member checks).
func BenchmarkParseInput(b *testing.B) {
	body := fourOptionInput("")
	b.ReportAllocs()
	start := cpuTime()
	for b.Loop() {
		if _, err := ParseInput(body); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, start)
}

// BenchmarkSignOnly is the ES256 signature of a result-sized payload, to show its share of Decide.
func BenchmarkSignOnly(b *testing.B) {
	k := testKeys(b)
	payload := make([]byte, 1500)
	for i := range payload {
		payload[i] = 'a'
	}
	b.ReportAllocs()
	start := cpuTime()
	for b.Loop() {
		if _, err := k.Sign(payload); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, start)
}
