package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/payguard/payguard/config"
	"github.com/payguard/payguard/internal/app"
	"github.com/payguard/payguard/internal/cli"
	"github.com/payguard/payguard/internal/logout"
)

func runProxy(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("proxy", flag.ContinueOnError)
	fs.SetOutput(stderr)
	configPath := fs.String("config", "", "YAML configuration file (default: the embedded default)")
	offline := fs.Bool("offline", false, "no network lookups: no sanctions download (the cached list or --sanctions-dir is used; with neither, every payment is held), domain age and DNS unknown")
	sanctionsDir := fs.String("sanctions-dir", "", "directory with OFAC's SDN CSV set or SDN.XML")
	logLevel := fs.String("log-level", "", "debug, info, warn or error (default: log.level, info)")
	listen := fs.String("listen", "", "proxy listen address, overrides proxy.listen (default 127.0.0.1:8402)")
	applyDataDir := cli.DataDirFlag(fs)
	if code, done := cli.ParseFlags(fs, args, stdout); done {
		return code
	}
	if fs.NArg() != 0 {
		fmt.Fprintf(stderr, "payguard proxy: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	cfg, err := config.Load(*configPath)
	if err != nil {
		fmt.Fprintln(stderr, "payguard proxy:", err)
		return 2
	}
	applyDataDir(cfg)
	if *listen != "" {
		cfg.Proxy.Listen = *listen
	}
	// The log's lines are buffered (logout: INFO at most FlushDelay late); what waits is written before
	// anything else this function writes to stderr, and when it returns.
	logOut := logout.NewWriter(stderr, logout.FlushDelay)
	defer logOut.Close()
	log, err := app.NewBufferedLogger(logOut, cfg, *logLevel)
	if err != nil {
		fmt.Fprintln(stderr, "payguard proxy: --log-level:", err)
		return 2
	}
	ln, err := app.ListenProxy(cfg)
	if err != nil {
		logOut.Close()
		fmt.Fprintln(stderr, "payguard proxy:", err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	run := app.ProxyRun{Flags: app.Flags{Offline: *offline, SanctionsDir: *sanctionsDir}, ConfigPath: *configPath, Log: log, Banner: stdout}
	if err := app.RunProxy(ctx, cfg, ln, run); err != nil {
		logOut.Close()
		fmt.Fprintln(stderr, "payguard proxy:", err)
		return 1
	}
	return 0
}
