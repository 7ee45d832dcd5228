//go:build unix

// Package benchcpu reports a benchmark's CPU time per operation next to ns/op. The shared 2-core machine
// is often oversubscribed: wall time then counts time spent waiting for a core, CPU time (user+system of
// the process, getrusage) does not, though it does count the runtime's GC and background work.
package benchcpu

import (
	"syscall"
	"testing"
	"time"
)

// Now is the process's user+system CPU time so far.
func Now() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// Report adds the metric cpu-ns/op: the CPU time since start, per operation.
func Report(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(Now()-start)/float64(b.N), "cpu-ns/op")
}
