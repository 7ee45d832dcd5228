// Package testredis finds a Redis for the tests of the redis store and of a fleet, so that README's test
// command passes on a machine with only Go and Node, without ever skipping silently:
//
//  1. PAYGUARD_TEST_REDIS_URL, when set, is used as it is (unreachable is an error: it was asked for);
//  2. else a real Redis answering at 127.0.0.1:6379 (CI starts one) is used;
//  3. else redis-server from PATH is started on a free loopback port, for this process only;
//  4. else an embedded Redis-compatible server (miniredis, in Go) is started, with a printed notice that
//     the suite then checks the store's logic but not a real Redis's behaviour.
//
// Whatever is chosen is printed once on stderr, so a run's log says which Redis it tested against. Tests
// that wipe or restart a Redis take one of their own instead (StartOwn: redis-server from PATH, else the
// embedded server, with a notice).
package testredis

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
)

// EnvURL names the variable that points the tests at a Redis of the developer's choice.
const EnvURL = "PAYGUARD_TEST_REDIS_URL"

// DefaultAddr is where development and CI machines run a real Redis.
const DefaultAddr = "127.0.0.1:6379"

// Kind says which of the four sources a URL came from.
type Kind string

const (
	KindEnv         Kind = "env"          // PAYGUARD_TEST_REDIS_URL
	KindReal        Kind = "real"         // a Redis already answering at 127.0.0.1:6379
	KindRedisServer Kind = "redis-server" // started from PATH for this process
	KindEmbedded    Kind = "embedded"     // miniredis, in process
)

// Server is the Redis chosen for this process.
type Server struct {
	URL    string
	Kind   Kind
	Notice string
}

var (
	once     sync.Once
	chosen   Server
	startErr error
)

// URL returns the Redis URL for this test binary, starting a server the first time if none is running. It
// fails the test (never skips) when no Redis can be had.
func URL(tb testing.TB) string {
	tb.Helper()
	s, err := Get()
	if err != nil {
		tb.Fatalf("no Redis for the tests: %v", err)
	}
	return s.URL
}

// Get chooses (once per process) and returns the Redis to test against.
func Get() (Server, error) {
	once.Do(func() {
		chosen, startErr = choose()
		if startErr == nil {
			fmt.Fprintf(os.Stderr, "testredis: %s\n", chosen.Notice)
		}
	})
	return chosen, startErr
}

func choose() (Server, error) {
	if u := strings.TrimSpace(os.Getenv(EnvURL)); u != "" {
		return Server{URL: u, Kind: KindEnv, Notice: "using " + EnvURL + "=" + redact(u)}, nil
	}
	if ping(DefaultAddr) {
		return Server{URL: "redis://" + DefaultAddr + "/0", Kind: KindReal, Notice: "using the Redis at " + DefaultAddr}, nil
	}
	if path, err := exec.LookPath("redis-server"); err == nil {
		addr, err := startRedisServer(path)
		if err == nil {
			return Server{URL: "redis://" + addr + "/0", Kind: KindRedisServer,
				Notice: "no Redis at " + DefaultAddr + " and " + EnvURL + " unset: started " + path + " at " + addr + " for this run"}, nil
		}
		fmt.Fprintf(os.Stderr, "testredis: starting %s failed (%v); falling back to the embedded server\n", path, err)
	}
	return chooseEmbedded()
}

// chooseEmbedded starts miniredis on a loopback port; it lives as long as the process.
func chooseEmbedded() (Server, error) {
	m := miniredis.NewMiniRedis()
	if err := m.StartAddr("127.0.0.1:0"); err != nil {
		return Server{}, fmt.Errorf("starting the embedded Redis-compatible server: %w", err)
	}
	// miniredis expires keys only when told that time passed; the store relies on real expiry (tickets,
	// trial counters, ledger days), so its clock follows the wall clock.
	go func() {
		last := time.Now()
		for now := range time.Tick(2 * time.Millisecond) {
			m.FastForward(now.Sub(last))
			last = now
		}
	}()
	return Server{URL: "redis://" + m.Addr() + "/0", Kind: KindEmbedded,
		Notice: "NOTICE: no Redis at " + DefaultAddr + ", " + EnvURL + " unset and no redis-server on PATH: " +
			"testing against the embedded Redis-compatible server (miniredis) at " + m.Addr() + ". " +
			"This checks the redis store's logic, not a real Redis's behaviour; install redis-server or set " + EnvURL + " for that."}, nil
}

// ping reports whether a Redis answers PING at addr.
func ping(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, 300*time.Millisecond)
	if err != nil {
		return false
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return false
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	return err == nil && strings.HasPrefix(line, "+PONG")
}

// startRedisServer runs redis-server on a free loopback port without persistence. The child gets SIGKILL
// when this process dies (Pdeathsig), so a test binary never leaves one behind.
func startRedisServer(path string) (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	dir, err := os.MkdirTemp("", "payguard-testredis-")
	if err != nil {
		return "", err
	}
	cmd := exec.Command(path, "--bind", "127.0.0.1", "--port", fmt.Sprint(port), "--save", "", "--appendonly", "no", "--dir", dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return "", err
	}
	go func() { _ = cmd.Wait(); os.RemoveAll(dir) }()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for ctx.Err() == nil {
		if ping(addr) {
			return addr, nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	_ = cmd.Process.Kill()
	return "", fmt.Errorf("redis-server did not answer at %s within 5s", addr)
}

// redact hides a password in a URL printed to the log.
func redact(u string) string {
	if at := strings.LastIndexByte(u, '@'); at > 0 {
		if scheme := strings.Index(u, "://"); scheme >= 0 && scheme+3 < at {
			return u[:scheme+3] + "***" + u[at:]
		}
	}
	return u
}
