package app

import (
	"context"
	"os"
	"runtime/debug"
	"testing"
)

func TestServeGCPercent(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// The operator's GOGC wins: the runtime read it at start, so the percent in force is kept.
	t.Setenv("GOGC", "150")
	debug.SetGCPercent(150)
	if got := tuneServeGC(ctx); got != 150 {
		t.Fatalf("with GOGC set: %d, want 150 (kept)", got)
	}
	if p := debug.SetGCPercent(150); p != 150 {
		t.Fatalf("with GOGC set the percent became %d", p)
	}
	os.Unsetenv("GOGC") // t.Setenv restores it afterwards
	got := tuneServeGC(ctx)
	if want := gcPercentFor(liveHeap(), serveHeapHeadroom); got != want {
		t.Fatalf("without GOGC: %d, want %d (live heap %d bytes)", got, want, liveHeap())
	}
	if p := debug.SetGCPercent(100); p != got {
		t.Fatalf("without GOGC the percent in force is %d, want %d", p, got)
	}
}

// TestGCPercentIsHeadroom: the target is the live heap plus serveHeapHeadroom, within the bounds.
func TestGCPercentIsHeadroom(t *testing.T) {
	for _, c := range []struct {
		live uint64
		want int
	}{
		{0, maxGCPercent},
		{2 << 20, maxGCPercent}, // 8× would be 16 MiB of room for 2 MiB: capped at 400 % (8 MiB)
		{4 << 20, 400},
		{8 << 20, 200},
		{16 << 20, 100},
		{32 << 20, 50},
		{256 << 20, minGCPercent},
	} {
		if got := gcPercentFor(c.live, serveHeapHeadroom); got != c.want {
			t.Errorf("live %d MiB: %d %%, want %d", c.live>>20, got, c.want)
		}
	}
}

// The proxy's target: the live heap plus proxyHeapHeadroom (20 MiB), within the same bounds; ~12 MB live
// (the full sanctions list) gets ~166 %.
func TestProxyGCPercentIsHeadroom(t *testing.T) {
	for _, c := range []struct {
		live uint64
		want int
	}{
		{0, maxGCPercent},
		{5 << 20, 400},
		{10 << 20, 200},
		{12 << 20, 166},
		{20 << 20, 100},
		{200 << 20, minGCPercent},
	} {
		if got := gcPercentFor(c.live, proxyHeapHeadroom); got != c.want {
			t.Errorf("live %d MiB: %d %%, want %d", c.live>>20, got, c.want)
		}
	}
}
