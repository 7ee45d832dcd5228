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
	"github.com/payguard/payguard/server/fees"
)

func runServe(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	configFile := fs.String("config", "", "YAML configuration file (default: the embedded default)")
	offline := fs.Bool("offline", false, "no network lookups: no sanctions refresh, domain age and DNS unknown")
	sanctionsDir := fs.String("sanctions-dir", "", "directory with OFAC's SDN CSV set or SDN.XML (no refresh); default: the cached list, refreshed daily")
	listen := fs.String("listen", "", "listen address, overrides server.listen (default 127.0.0.1:8080)")
	logLevel := fs.String("log-level", "", "debug, info, warn or error (default: log.level, info)")
	applyDataDir := cli.DataDirFlag(fs)
	if code, done := cli.ParseFlags(fs, args, stdout); done {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "payguard serve: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	cfg, err := config.Load(*configFile)
	if err != nil {
		fmt.Fprintf(stderr, "payguard serve: %v\n", err)
		return 2
	}
	applyDataDir(cfg)
	if *listen != "" {
		cfg.Server.Listen = *listen
	}
	// The log goes to stderr, as the proxy's does; stdout is left for what a command prints. Its lines are
	// buffered as the proxy's (logout: INFO, the request lines, at most FlushDelay late; WARN and ERROR at
	// once); what waits is written before anything else this function writes to stderr, and when it returns.
	logOut := logout.NewWriter(stderr, logout.FlushDelay)
	defer logOut.Close()
	log, err := app.NewBufferedLogger(logOut, cfg, *logLevel)
	if err != nil {
		logOut.Close()
		fmt.Fprintln(stderr, "payguard serve: --log-level:", err)
		return 2
	}
	terms, err := fees.TermsFromConfig(cfg.Server.Fees)
	if err := app.ServeStartProblems(err, cfg.Server); err != nil {
		logOut.Close()
		fmt.Fprintf(stderr, "payguard serve: %v\n", err)
		return 2
	}
	ln, err := app.ListenServe(cfg)
	if err != nil {
		logOut.Close()
		fmt.Fprintf(stderr, "payguard serve: %v\n", err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	run := app.ServeRun{Flags: app.Flags{Offline: *offline, SanctionsDir: *sanctionsDir}, Terms: terms, Log: log, Banner: stdout}
	if err := app.RunServe(ctx, cfg, ln, run); err != nil {
		logOut.Close()
		fmt.Fprintf(stderr, "payguard serve: %v\n", err)
		return 1
	}
	return 0
}
