package testredis

import (
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
	"github.com/alicebob/miniredis/v2/server"
)

// Own is a Redis of one test's own, which the test may wipe, restart empty or configure: never the shared
// one of Get. It is redis-server from PATH when there is one (the real behaviour: CI installs it), else the
// embedded miniredis with a printed notice, so that the ledger-loss tests run on a machine with only Go.
//
// The embedded server answers CONFIG GET for the settings the redis store checks (save, appendonly,
// maxmemory-policy) from the same redis-server arguments the test passes, and refuses CONFIG when the
// arguments rename it away (`--rename-command CONFIG ""`), as a managed Redis does.
type Own struct {
	tb       testing.TB
	port     int
	args     []string
	path     string // redis-server, or "" for the embedded server
	cmd      *exec.Cmd
	mini     *miniredis.Miniredis
	stopTick chan struct{}
}

var ownNotice sync.Once

// StartOwn starts an empty Redis on a free loopback port, without persistence unless args (redis-server
// arguments such as "--appendonly", "yes") say otherwise, and stops it when the test ends.
func StartOwn(tb testing.TB, args ...string) *Own {
	tb.Helper()
	path, _ := exec.LookPath("redis-server")
	return startOwn(tb, path, args)
}

// startOwn starts redis-server at path, or the embedded server when path is "".
func startOwn(tb testing.TB, path string, args []string) *Own {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	o := &Own{tb: tb, port: l.Addr().(*net.TCPAddr).Port, args: args, path: path}
	l.Close()
	if path == "" {
		ownNotice.Do(func() {
			fmt.Fprintln(os.Stderr, "testredis: NOTICE: no redis-server on PATH: the tests that wipe or restart a Redis "+
				"of their own run against the embedded Redis-compatible server (miniredis); install redis-server to "+
				"run them against a real one")
		})
	}
	o.start()
	tb.Cleanup(o.Stop)
	return o
}

// Addr is host:port; URL is the redis:// URL of database 0.
func (o *Own) Addr() string { return fmt.Sprintf("127.0.0.1:%d", o.port) }
func (o *Own) URL() string  { return "redis://" + o.Addr() + "/0" }

// Embedded reports whether this is the embedded server rather than redis-server (a benchmark of Redis's own
// memory skips on it).
func (o *Own) Embedded() bool { return o.path == "" }

// Restart is a restart without persistence: the same address, empty.
func (o *Own) Restart() { o.tb.Helper(); o.Stop(); o.start() }

// Stop stops the server (idempotent).
func (o *Own) Stop() {
	if o.cmd != nil {
		_ = o.cmd.Process.Kill()
		_ = o.cmd.Wait()
		o.cmd = nil
	}
	if o.mini != nil {
		close(o.stopTick)
		o.mini.Close()
		o.mini = nil
	}
}

func (o *Own) start() {
	o.tb.Helper()
	if o.path == "" {
		o.startEmbedded()
		return
	}
	args := append([]string{"--port", fmt.Sprint(o.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", o.tb.TempDir()}, o.args...)
	o.cmd = exec.Command(o.path, args...)
	o.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := o.cmd.Start(); err != nil {
		o.tb.Fatalf("starting %s: %v", o.path, err)
	}
	for i := 0; !ping(o.Addr()); i++ {
		if i == 250 {
			o.tb.Fatalf("redis-server at %s did not answer within 5s", o.Addr())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (o *Own) startEmbedded() {
	m := miniredis.NewMiniRedis()
	var err error
	for i := 0; i < 100; i++ { // the old listener's port may take a moment to be free again
		if err = m.StartAddr(o.Addr()); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		o.tb.Fatalf("starting the embedded Redis at %s: %v", o.Addr(), err)
	}
	// Registered before the test's first connection (the server exists only once started).
	if conf, ok := o.config(); ok {
		if err := m.Server().Register("CONFIG", configGet(conf)); err != nil {
			o.tb.Fatal(err)
		}
	}
	// miniredis expires keys only when told that time passed: its clock follows the wall clock.
	o.mini, o.stopTick = m, make(chan struct{})
	go func(stop chan struct{}) {
		t := time.NewTicker(2 * time.Millisecond)
		defer t.Stop()
		last := time.Now()
		for {
			select {
			case <-stop:
				return
			case now := <-t.C:
				m.FastForward(now.Sub(last))
				last = now
			}
		}
	}(o.stopTick)
}

// config is the CONFIG a redis-server started with o.args would report for the settings the store reads;
// false when the arguments rename CONFIG away.
func (o *Own) config() (map[string]string, bool) {
	conf := map[string]string{"save": "", "appendonly": "no", "maxmemory-policy": "noeviction"}
	for i := 0; i+1 < len(o.args); i++ {
		name := strings.TrimPrefix(o.args[i], "--")
		if name == o.args[i] {
			continue
		}
		if name == "rename-command" && i+2 < len(o.args) && strings.EqualFold(o.args[i+1], "CONFIG") {
			return nil, false
		}
		if _, known := conf[name]; known {
			conf[name] = o.args[i+1]
		}
	}
	return conf, true
}

// configGet answers CONFIG GET name from conf (an empty reply for other names, as Redis does).
func configGet(conf map[string]string) server.Cmd {
	return func(c *server.Peer, _ string, args []string) {
		if len(args) != 2 || !strings.EqualFold(args[0], "GET") {
			c.WriteError("ERR the embedded test Redis answers only CONFIG GET name")
			return
		}
		v, ok := conf[strings.ToLower(args[1])]
		if !ok {
			c.WriteMapLen(0)
			return
		}
		c.WriteMapLen(1)
		c.WriteBulk(strings.ToLower(args[1]))
		c.WriteBulk(v)
	}
}
