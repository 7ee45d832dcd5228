package main

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/payguard/payguard/config"
	"github.com/payguard/payguard/internal/app"
	"github.com/payguard/payguard/internal/testutil"
)

// ownFetchChild, set to a port, makes TestProxyNeverProxiesItsOwnFetch the child that runs the proxy there,
// on the listener the parent bound and handed over as file descriptor 3 (no race for the port).
const ownFetchChild = "PAYGUARD_TEST_OWN_FETCH_PORT"

// TestProxyNeverProxiesItsOwnFetch starts the proxy in the shell README sets up for the agent: HTTPS_PROXY
// and HTTP_PROXY point at the proxy itself (spelled localhost). Its own list download must go direct to the
// list's server, never into its own listener (where it was MITM'd, failed its TLS handshake as "agent TLS
// handshake failed", and the list never loaded). The list's server is reached at 0.0.0.0 (this machine, but
// not a name the proxy variables' loopback exception covers), over TLS the downloader does not trust: the
// test only needs to see where the connection went.
//
// It runs in a child process started with those variables set, as a shell starts payguard: Go reads the
// proxy variables once per process, before any test could set them.
func TestProxyNeverProxiesItsOwnFetch(t *testing.T) {
	port := os.Getenv(ownFetchChild)
	if port == "" {
		ln := testutil.Listen(t)
		lf, err := ln.(*net.TCPListener).File()
		if err != nil {
			t.Fatal(err)
		}
		defer lf.Close()
		_, port, _ = net.SplitHostPort(ln.Addr().String())
		self := "http://localhost:" + port
		cmd := exec.Command(os.Args[0], "-test.run=^TestProxyNeverProxiesItsOwnFetch$", "-test.v")
		cmd.ExtraFiles = []*os.File{lf}
		cmd.Env = append(os.Environ(), ownFetchChild+"="+port, "HTTPS_PROXY="+self, "https_proxy="+self,
			"HTTP_PROXY="+self, "http_proxy="+self, "NO_PROXY=", "no_proxy=")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS: TestProxyNeverProxiesItsOwnFetch") {
			t.Fatalf("child process: %v\n%s", err, out)
		}
		return
	}
	var direct atomic.Int32
	src := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	src.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			direct.Add(1)
		}
	}
	src.Config.ErrorLog = slog.NewLogLogger(slog.DiscardHandler, slog.LevelError)
	src.StartTLS()
	defer src.Close()
	_, srcPort, _ := net.SplitHostPort(src.Listener.Addr().String())

	t.Chdir(t.TempDir())
	cfg, err := config.Default()
	if err != nil {
		t.Fatal(err)
	}
	cfg.Proxy.Listen, cfg.Admin.Listen = "127.0.0.1:"+port, "127.0.0.1:0"
	cfg.Screening.Sanctions.Sources = []string{"https://0.0.0.0:" + srcPort + "/sdn.csv"}
	cfg.Screening.Domain.Enabled = false // no RDAP bootstrap download from the internet in a test
	var logs syncLog
	log := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	proxyLn, err := net.FileListener(os.NewFile(3, "proxy listener"))
	if err != nil {
		t.Fatal(err)
	}
	adminLn := testutil.Listen(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		ln := app.ProxyListeners{Proxy: proxyLn, Admin: adminLn}
		done <- app.RunProxy(ctx, cfg, ln, app.ProxyRun{Log: log, Banner: bannerWriter{ch: make(chan string, 1)}})
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serveProxy: %v", err)
		}
	}()
	// Wait for the first download attempt to land somewhere: directly at the list's server, or in payguard's
	// own listener (which logs the failed handshake of its "agent").
	deadline := time.After(60 * time.Second)
	for direct.Load() == 0 && !strings.Contains(logs.String(), "agent TLS handshake failed") {
		select {
		case <-deadline:
			t.Fatalf("no download attempt seen:\n%s", logs.String())
		case err := <-done:
			done <- err
			t.Fatalf("serveProxy returned: %v\n%s", err, logs.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	if strings.Contains(logs.String(), "agent TLS handshake failed") {
		t.Fatalf("payguard sent its own download through its own listener:\n%s", logs.String())
	}
	if direct.Load() == 0 {
		t.Fatal("the list's server saw no connection")
	}
	if !strings.Contains(logs.String(), "points at payguard's own listener") {
		t.Errorf("ignoring HTTPS_PROXY was not logged:\n%s", logs.String())
	}
}

// TestFailedStartLeavesNoDataDir: a proxy or serve that cannot bind its port (in use) fails before creating
// its data directory (it created payguard-data with a CA, a key and a token, then failed).
func TestFailedStartLeavesNoDataDir(t *testing.T) {
	t.Setenv(config.DataDirEnv, "")
	busy := testutil.Listen(t)
	cfgPath := filepath.Join(t.TempDir(), "payguard.yaml")
	yaml := "admin:\n  listen: 127.0.0.1:0\nserver:\n  contact: mailto:ops@example.com\n  fees:\n    network: eip155:84532\n" +
		"    pay_to: \"0xf54127927F219FB78C8D1A1fF3D7dc6D7f70C98E\"\n"
	if err := os.WriteFile(cfgPath, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{"proxy", "serve"} {
		t.Run(mode, func(t *testing.T) {
			dir := t.TempDir()
			t.Chdir(dir)
			var out, errb strings.Builder
			code := runMain([]string{mode, "--offline", "--config", cfgPath, "--listen", busy.Addr().String()}, nil, &out, &errb)
			if code != 1 || !strings.Contains(errb.String(), "address already in use") {
				t.Fatalf("start on a busy port: exit %d: %s", code, errb.String())
			}
			if _, err := os.Stat(filepath.Join(dir, "payguard-data")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("a failed start left payguard-data behind (stat: %v)", err)
			}
		})
	}
}

// syncLog is a log destination tests read while the server writes.
type syncLog struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncLog) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncLog) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
