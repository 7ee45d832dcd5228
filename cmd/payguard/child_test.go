package main

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// child is the real payguard binary started by a test: the tests that need the process itself (its signal
// handling, what it writes when it stops) share this one way of starting, waiting for and stopping it.
type child struct {
	cmd    *exec.Cmd
	log    *syncLog
	exited chan struct{}
}

// startChild starts cmd with its stderr in log (and its stdout, if the caller pointed cmd.Stdout there too);
// the process is killed, if still running, when the test ends.
func startChild(t *testing.T, cmd *exec.Cmd, log *syncLog) *child {
	t.Helper()
	cmd.Stderr = log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &child{cmd: cmd, log: log, exited: make(chan struct{})}
	go func() { cmd.Wait(); close(c.exited) }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-c.exited
	})
	return c
}

// waitUp calls up until it succeeds (the child listens and answers), failing the test with the child's log
// if the child exits first or a minute passes.
func (c *child) waitUp(t *testing.T, what string, up func() error) {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); ; {
		err := up()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never answered: %v\n%s", what, err, c.log.String())
		}
		select {
		case <-c.exited:
			t.Fatalf("%s exited before it answered: %v\n%s", what, err, c.log.String())
		case <-time.After(25 * time.Millisecond):
		}
	}
}

// waitHealthz waits until GET base/healthz answers.
func (c *child) waitHealthz(t *testing.T, what, base string) {
	t.Helper()
	c.waitUp(t, what, func() error {
		resp, err := http.Get(base + "/healthz")
		if err == nil {
			resp.Body.Close()
		}
		return err
	})
}

// serveCommand is `payguard serve` from bin, offline, on a free address with serveConfig's configuration
// (feesExtra under server.fees) and the test sanctions list, in this process's environment. It returns the
// command, not started, its base URL and the list's directory.
func serveCommand(t *testing.T, bin, feesExtra string) (cmd *exec.Cmd, base, sanctionsDir string) {
	t.Helper()
	sanctionsDir, err := filepath.Abs(filepath.Join("testdata", "check-sanctions"))
	if err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	path := serveConfig(t, t.TempDir(), addr, feesExtra)
	cmd = exec.Command(bin, "serve", "--config", path, "--offline", "--sanctions-dir", sanctionsDir)
	cmd.Env = os.Environ()
	return cmd, "http://" + addr, sanctionsDir
}

// stop sends SIGTERM, waits for the child to exit and returns all it logged.
func (c *child) stop(t *testing.T, what string) string {
	t.Helper()
	if err := c.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-c.exited:
	case <-time.After(30 * time.Second):
		t.Fatalf("%s did not stop on SIGTERM", what)
	}
	return c.log.String()
}
