package domain

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/payguard/payguard/internal/logbuf"
	"github.com/payguard/payguard/internal/testutil"
)

// bootstrapSHA256 is the SHA-256 of the real IANA RDAP bootstrap snapshot (publication 2026-03-23T19:00:02Z)
// as its provenance records it (screening/domain/domaintest/testdata/PROVENANCE.md, testdata/README.md).
const bootstrapSHA256 = "4e311cac952f305568abf59d58e3b581263b5828172eb0771db2342032f35356"

// TestEmbeddedBootstrapIsTheRealSnapshot: the bootstrap built in is the recorded IANA snapshot, byte for
// byte: nobody trimmed or edited it.
func TestEmbeddedBootstrapIsTheRealSnapshot(t *testing.T) {
	sum := sha256.Sum256(embeddedBootstrap)
	if got := hex.EncodeToString(sum[:]); got != bootstrapSHA256 {
		t.Fatalf("screening/domain/iana-dns-bootstrap.json has SHA-256 %s, want the recorded snapshot's %s", got, bootstrapSHA256)
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
		testutil.Eventually(t, 30*time.Second, cond, "Run did not %s", what)
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
		// If Run entered its loop it would fetch and then block until this context ends: a Run that returns
		// while the context is still live returned on its own. The deadline only turns a hang into a failure;
		// no wall-clock bound is asserted.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		New(o).Run(ctx, nil)
		if ctx.Err() != nil {
			t.Errorf("Run with %+v returned only when its context ended, not at once", o)
		}
		cancel()
	}
	if requests.Load() != before {
		t.Error("Run fetched a bootstrap it does not need")
	}
}
