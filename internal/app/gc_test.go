package app

import (
	"os"
	"runtime/debug"
	"testing"
)

func TestServeGCPercent(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	// The operator's GOGC wins: the runtime read it at start, so the percent in force is kept.
	t.Setenv("GOGC", "150")
	debug.SetGCPercent(150)
	if got := tuneServeGC(); got != 150 {
		t.Fatalf("with GOGC set: %d, want 150 (kept)", got)
	}
	if p := debug.SetGCPercent(150); p != 150 {
		t.Fatalf("with GOGC set the percent became %d", p)
	}
	os.Unsetenv("GOGC") // t.Setenv restores it afterwards
	if got := tuneServeGC(); got != serveGCPercent {
		t.Fatalf("without GOGC: %d, want %d", got, serveGCPercent)
	}
	if p := debug.SetGCPercent(100); p != serveGCPercent {
		t.Fatalf("without GOGC the percent in force is %d, want %d", p, serveGCPercent)
	}
}
