package logout

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
)

// sink records each write it receives.
type sink struct {
	mu     sync.Mutex
	writes []string
}

func (s *sink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.writes = append(s.writes, string(p))
	return len(p), nil
}

func (s *sink) all() (string, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.writes, ""), len(s.writes)
}

// Lines wait until a flush (here Close: the delay is an hour), then go out whole, in order, in one write.
func TestLinesWaitAndGoOutInOrderInOneWrite(t *testing.T) {
	s := &sink{}
	w := NewWriter(s, time.Hour)
	for i := range 100 {
		fmt.Fprintf(w, "line %d\n", i)
	}
	if got, n := s.all(); n != 0 {
		t.Fatalf("written before a flush: %q", got)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got, n := s.all()
	var want strings.Builder
	for i := range 100 {
		fmt.Fprintf(&want, "line %d\n", i)
	}
	if got != want.String() || n != 1 {
		t.Fatalf("%d writes of %q", n, got)
	}
	// After Close a line goes out at once.
	fmt.Fprintf(w, "late\n")
	if got, _ := s.all(); !strings.HasSuffix(got, "late\n") {
		t.Fatalf("a line after Close waits: %q", got)
	}
	if err := w.Close(); err != nil { // twice is fine
		t.Fatal(err)
	}
}

// A line is written by the timer, without a Flush, within the delay (the test waits up to 10 s for it).
func TestTheDelayFlushes(t *testing.T) {
	s := &sink{}
	w := NewWriter(s, 5*time.Millisecond)
	defer w.Close()
	w.Write([]byte("one\n"))
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		if got, _ := s.all(); got == "one\n" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the timer never flushed the line")
		}
	}
	// And again after that flush: the timer is armed anew by the next line.
	w.Write([]byte("two\n"))
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		if got, _ := s.all(); got == "one\ntwo\n" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the timer never flushed the second line")
		}
	}
}

// MaxPending bytes waiting are written at once.
func TestMaxPendingWritesAtOnce(t *testing.T) {
	s := &sink{}
	w := NewWriter(s, time.Hour)
	defer w.Close()
	line := strings.Repeat("x", 1023) + "\n"
	for range MaxPending / len(line) {
		w.Write([]byte(line))
	}
	if got, n := s.all(); n != 1 || len(got) != MaxPending {
		t.Fatalf("%d writes, %d bytes; want one write of %d", n, len(got), MaxPending)
	}
}

// Lines written side by side are never cut or mixed (go test -race).
func TestConcurrentLinesStayWhole(t *testing.T) {
	s := &sink{}
	w := NewWriter(s, time.Millisecond)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 2000 {
				fmt.Fprintf(w, "g%d-%d %s\n", g, i, strings.Repeat("y", i%200))
			}
		}()
	}
	wg.Wait()
	w.Close()
	got, _ := s.all()
	lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	if len(lines) != 8*2000 {
		t.Fatalf("%d lines, want %d", len(lines), 8*2000)
	}
	last := map[string]int{}
	for _, l := range lines {
		head, ys, _ := strings.Cut(l, " ")
		var g, i int
		if _, err := fmt.Sscanf(head, "g%d-%d", &g, &i); err != nil || ys != strings.Repeat("y", i%200) {
			t.Fatalf("cut or mixed line %q", l)
		}
		key := fmt.Sprint(g)
		if prev, ok := last[key]; ok && i != prev+1 || !ok && i != 0 {
			t.Fatalf("goroutine %d: line %d after %d", g, i, prev)
		}
		last[key] = i
	}
}

// A WARN or ERROR record is written at once, with every line before it; INFO waits.
func TestWarnFlushes(t *testing.T) {
	s := &sink{}
	w := NewWriter(s, time.Hour)
	defer w.Close()
	log := slog.New(NewHandler(w, slog.LevelInfo))
	log.Info("first")
	log.Debug("not at this level")
	if got, _ := s.all(); got != "" {
		t.Fatalf("an INFO line was written at once: %q", got)
	}
	log.Warn("second")
	got, _ := s.all()
	if !strings.Contains(got, `"msg":"first"`) || !strings.Contains(got, `"msg":"second"`) || strings.Contains(got, "not at this level") {
		t.Fatalf("after a WARN: %q", got)
	}
	log.With("k", "v").Error("third") // a derived handler flushes too
	if got, _ := s.all(); !strings.Contains(got, `"msg":"third","k":"v"`) {
		t.Fatalf("after an ERROR of a derived handler: %q", got)
	}
}

// The handler writes what slog's JSON handler writes; only the handler without attributes or groups takes
// hand-written lines.
func TestHandlerIsSlogsJSONHandler(t *testing.T) {
	var want bytes.Buffer
	s := &sink{}
	w := NewWriter(s, time.Hour)
	h := NewHandler(w, slog.LevelDebug)
	r := slog.NewRecord(time.Date(2026, 11, 27, 1, 2, 3, 4, time.UTC), slog.LevelInfo, "m", 0)
	r.AddAttrs(slog.String("a", "<b>\n"), slog.Any("l", []string{"x"}), slog.Float64("f", 0.5))
	h.Handle(context.Background(), r)
	slog.NewJSONHandler(&want, &slog.HandlerOptions{Level: slog.LevelDebug}).Handle(context.Background(), r)
	w.Close()
	if got, _ := s.all(); got != want.String() {
		t.Fatalf("got %q, want %q", got, want.String())
	}
	if _, ok := slog.Handler(h).(LineWriter); !ok {
		t.Fatal("the handler takes no lines")
	}
	for _, d := range []slog.Handler{h.WithAttrs([]slog.Attr{slog.String("k", "v")}), h.WithGroup("g")} {
		if _, ok := d.(LineWriter); ok {
			t.Fatalf("%T takes lines without its attributes", d)
		}
	}
}
