package main

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/payguard/payguard/config"
	"github.com/payguard/payguard/internal/app"
	"github.com/payguard/payguard/internal/testutil"
	"github.com/payguard/payguard/server/fees"
)

// serveProxy runs `payguard proxy`'s start-up (app.RunProxy) on listeners the test holds (internal/testutil),
// so no test races another for a free port; banner receives the start-up summary.
func serveProxy(t testing.TB, ctx context.Context, cfg *config.Config, f app.Flags, log *slog.Logger, banner io.Writer) error {
	ln := app.ProxyListeners{Proxy: testutil.Listen(t), Admin: testutil.Listen(t)}
	return app.RunProxy(ctx, cfg, ln, app.ProxyRun{Flags: f, Log: log, Banner: banner})
}

// serveAPI runs `payguard serve`'s start-up (app.RunServe) on a listener the test holds.
func serveAPI(t testing.TB, ctx context.Context, cfg *config.Config, terms fees.Terms, f app.Flags, log *slog.Logger, banner ...io.Writer) error {
	run := app.ServeRun{Flags: f, Terms: terms, Log: log}
	if len(banner) > 0 {
		run.Banner = banner[0]
	}
	ln := app.ServeListeners{API: testutil.Listen(t)}
	if cfg.Server.MetricsListen != "" {
		ln.Metrics = testutil.Listen(t)
	}
	return app.RunServe(ctx, cfg, ln, run)
}
