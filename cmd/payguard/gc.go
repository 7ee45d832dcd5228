package main

import (
	"os"
	"runtime/debug"
)

// serveGCPercent is the garbage collector's target for `payguard serve` when GOGC is not set: the heap may
// grow to five times what is live before a collection starts, instead of Go's two.
//
// Why: the live heap is mostly the sanctions index (about 30 MB), which every cycle marks, while a preflight
// allocates about 27 KB that dies at once. At 5,000 preflights a second Go's default ran a cycle about every
// 200 ms, and each cycle's stop-the-world pauses and marking (a quarter of the CPUs while it runs) were where
// the open-loop p99 came from on two cores: 5.2–5.4 ms at GOGC=100 against 2.8–3.1 ms at 400 in the same
// session (docs/benchmarks/server.md). The price is memory: the heap peaks near five times the live heap
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
