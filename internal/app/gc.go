package app

import (
	"os"
	"runtime/debug"
)

// serveGCPercent is the garbage collector's target for `payguard serve` when GOGC is not set: the heap may
// grow to five times what is live before a collection starts, instead of Go's two.
//
// Why: the live heap is mostly the sanctions index, which every cycle marks, while a preflight's allocations
// die at once. Under load Go's default ran a cycle several times a second, and each cycle's stop-the-world
// pauses and marking (a quarter of the CPUs while it runs) were where the open-loop p99 came from on two
// cores (the figures at GOGC=100 and 400: docs/benchmarks/server.md, "Garbage collector target"). The price is memory: the heap peaks near five times the live heap
// instead of twice it (docs/BENCHMARKS.md has the RSS). GOGC (and GOMEMLIMIT, to cap it) set by the operator
// win, as for any Go program.
const serveGCPercent = 400

// tuneServeGC applies serveGCPercent unless the environment sets GOGC; it reports the percent in force.
func tuneServeGC() int {
	if _, set := os.LookupEnv("GOGC"); set {
		p := debug.SetGCPercent(100) // read the current value back...
		debug.SetGCPercent(p)        // ...and keep it
		return p
	}
	debug.SetGCPercent(serveGCPercent)
	return serveGCPercent
}
