// Command testredis gives the interop suite the same Redis the Go tests get (package testredis): it
// prints one JSON line {"url","kind","notice"} on stdout and keeps any server it started alive until its
// standard input closes (the test process ends) or it is signalled.
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/payguard/payguard/internal/testredis"
)

func main() {
	s, err := testredis.Get()
	if err != nil {
		fmt.Fprintln(os.Stderr, "testredis:", err)
		os.Exit(1)
	}
	if err := json.NewEncoder(os.Stdout).Encode(map[string]string{"url": s.URL, "kind": string(s.Kind), "notice": s.Notice}); err != nil {
		os.Exit(1)
	}
	done := make(chan struct{})
	go func() { _, _ = io.Copy(io.Discard, os.Stdin); close(done) }()
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	select {
	case <-done:
	case <-sig:
	}
}
