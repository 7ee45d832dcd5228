package logout

import (
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// gate is an out whose first write waits until it is opened: a flush in progress while Close and other
// writes arrive.
type gate struct {
	mu      sync.Mutex
	got     []string
	entered chan struct{}
	open    chan struct{}
	first   bool
}

func (g *gate) Write(p []byte) (int, error) {
	g.mu.Lock()
	first := !g.first
	g.first = true
	g.mu.Unlock()
	if first {
		close(g.entered)
		<-g.open
	}
	g.mu.Lock()
	g.got = append(g.got, string(p))
	g.mu.Unlock()
	return len(p), nil
}

// A line written while Close runs goes out behind every line written before Close was called (attack2):
// Close marks the Writer closed before its flush takes the pending lines, so a write that sees it closed,
// written straight to out, raced that flush and could overtake lines still waiting.
func TestWriteDuringCloseKeepsOrder(t *testing.T) {
	for n := 0; n < 200; n++ {
		g := &gate{entered: make(chan struct{}), open: make(chan struct{})}
		w := NewWriter(g, time.Hour)
		w.Write([]byte("a\n"))
		go w.Flush() // writes "a", held in out
		<-g.entered
		w.Write([]byte("b\n")) // waits for the next flush
		closed := make(chan struct{})
		go func() { w.Close(); close(closed) }()
		for i := 0; i < 1000; i++ { // let Close mark the Writer closed, when it does so before flushing
			w.mu.Lock()
			c := w.closed
			w.mu.Unlock()
			if c {
				break
			}
			runtime.Gosched()
		}
		wrote := make(chan struct{})
		go func() { w.Write([]byte("c\n")); close(wrote) }() // after Close was called
		for i := 0; i < 100; i++ {
			runtime.Gosched()
		}
		close(g.open)
		<-closed
		<-wrote
		if got := strings.Join(g.got, ""); got != "a\nb\nc\n" {
			t.Fatalf("run %d: out got %q, want a, b, c in order", n, got)
		}
	}
}
