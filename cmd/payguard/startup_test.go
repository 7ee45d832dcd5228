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

// proxyListeners are a proxy's and an admin listener the test holds (internal/testutil), bound before the
// proxy starts, so no test races another for a free port.
func proxyListeners(t testing.TB) app.ProxyListeners {
	return app.ProxyListeners{Proxy: testutil.Listen(t), Admin: testutil.Listen(t)}
}

// serveListeners are serve's listeners the test holds: the API's, and the metrics one when cfg asks for it.
func serveListeners(t testing.TB, cfg *config.Config) app.ServeListeners {
	ln := app.ServeListeners{API: testutil.Listen(t)}
	if cfg.Server.MetricsListen != "" {
		ln.Metrics = testutil.Listen(t)
	}
	return ln
}

// serveProxy runs `payguard proxy`'s start-up (app.RunProxy) on ln; banner receives the start-up summary.
func serveProxy(ln app.ProxyListeners, ctx context.Context, cfg *config.Config, f app.Flags, log *slog.Logger, banner io.Writer) error {
	return app.RunProxy(ctx, cfg, ln, app.ProxyRun{Flags: f, Log: log, Banner: banner})
}

// serveAPI runs `payguard serve`'s start-up (app.RunServe) on ln; banner, when given, receives its summary.
func serveAPI(ln app.ServeListeners, ctx context.Context, cfg *config.Config, terms fees.Terms, f app.Flags, log *slog.Logger, banner ...io.Writer) error {
	run := app.ServeRun{Flags: f, Terms: terms, Log: log}
	if len(banner) > 0 {
		run.Banner = banner[0]
	}
	return app.RunServe(ctx, cfg, ln, run)
}
