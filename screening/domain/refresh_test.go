package domain

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/payguard/payguard/internal/logbuf"
)

// TestEmbeddedBootstrapIsTheSharedSnapshot: the bootstrap built in is the IANA snapshot in
// shared/data/rdap, byte for byte.
func TestEmbeddedBootstrapIsTheSharedSnapshot(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	shared := filepath.Join(filepath.Dir(file), "..", "..", "..", "shared", "data", "rdap", "iana-dns-bootstrap.json")
	want, err := os.ReadFile(shared)
	if err != nil {
		t.Fatalf("shared/ must sit beside the repository: %v", err)
	}
	if !bytes.Equal(embeddedBootstrap, want) {
		t.Fatal("screening/domain/iana-dns-bootstrap.json differs from shared/data/rdap/iana-dns-bootstrap.json")
	}
}

// TestRunRefreshesBootstrap: Run fetches the bootstrap from the configured URL at once, keeps the one in use
// and logs when a fetch fails, and stops with its context. Offline or with a fixed RDAP base URL it does
// not fetch at all.
func TestRunRefreshesBootstrap(t *testing.T) {
	var mu sync.Mutex
	status, body := http.StatusInternalServerError, "{}"
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		mu.Lock()
		defer mu.Unlock()
		w.WriteHeader(status)
		w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)

	run := func(c *Checker, log *logbuf.Buffer) (stop func()) {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			c.Run(ctx, slog.New(slog.NewTextHandler(log, nil)))
		}()
		return func() { cancel(); <-done }
	}
	// eventually waits for Run's first refresh to have its effect; the deadline only guards against a hang.
	eventually := func(what string, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("Run did not %s", what)
			}
		}
	}

	// A failing server: the embedded bootstrap stays, and the failure is logged.
	c := New(Options{BootstrapURL: srv.URL + "/dns.json", BootstrapRefresh: time.Hour, Resolver: "127.0.0.1:1"})
	embedded := c.BootstrapPublication()
	var log logbuf.Buffer
	stop := run(c, &log)
	eventually("log the failed refresh", func() bool { return strings.Contains(log.String(), "rdap bootstrap refresh failed") })
	stop() // returns once the context ends
	if !c.BootstrapPublication().Equal(embedded) {
		t.Error("a failed refresh replaced the embedded bootstrap")
	}
	if !strings.Contains(log.String(), "500") {
		t.Errorf("the log does not say why: %q", log.String())
	}

	// A good file: used from then on.
	mu.Lock()
	status, body = http.StatusOK, `{"publication":"2026-10-01T00:00:00Z","services":[[["com"],["https://rdap.example/"]]]}`
	mu.Unlock()
	c = New(Options{BootstrapURL: srv.URL + "/dns.json", BootstrapRefresh: time.Hour, Resolver: "127.0.0.1:1"})
	stop = run(c, &logbuf.Buffer{})
	want := time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)
	eventually("install the fetched bootstrap", func() bool { return c.BootstrapPublication().Equal(want) })
	stop()

	// Offline, or every query going to one RDAP server: no bootstrap is needed, Run returns at once.
	before := requests.Load()
	for _, o := range []Options{{Offline: true}, {RDAPBaseURL: "https://rdap.internal/", Resolver: "127.0.0.1:1"}} {
		o.BootstrapURL = srv.URL + "/dns.json"
		// If Run entered its loop it would fetch and then block until this context ends; the deadline turns
		// that into a failure below instead of a hung test.
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		start := time.Now()
		New(o).Run(ctx, nil)
		cancel()
		if time.Since(start) > time.Second {
			t.Errorf("Run with %+v did not return at once", o)
		}
	}
	if requests.Load() != before {
		t.Error("Run fetched a bootstrap it does not need")
	}
}
