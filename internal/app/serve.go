package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/payguard/payguard/config"
	"github.com/payguard/payguard/screening"
	"github.com/payguard/payguard/server"
	"github.com/payguard/payguard/server/core"
	"github.com/payguard/payguard/server/fees"
	servermcp "github.com/payguard/payguard/server/mcp"
	"github.com/payguard/payguard/server/trial"
	"github.com/payguard/payguard/store"
)

// ServeListeners are serve's listeners: the public API's (server.listen) and, when server.metrics_listen is
// set, the metrics one (nil otherwise). RunServe closes them when it returns.
type ServeListeners struct {
	API, Metrics net.Listener
}

// ListenServe binds server.listen and server.metrics_listen (when set), before anything is created.
func ListenServe(cfg *config.Config) (ServeListeners, error) {
	api, err := net.Listen("tcp", cfg.Server.Listen)
	if err != nil {
		return ServeListeners{}, fmt.Errorf("listener: %w", err)
	}
	ln := ServeListeners{API: api}
	if cfg.Server.MetricsListen != "" {
		if ln.Metrics, err = net.Listen("tcp", cfg.Server.MetricsListen); err != nil {
			api.Close()
			return ServeListeners{}, fmt.Errorf("metrics listener: %w", err)
		}
	}
	return ln, nil
}

// ServeRun is how one `payguard serve` runs besides its configuration.
type ServeRun struct {
	Flags
	// Terms are the fee terms (fees.TermsFromConfig, checked before the listeners are bound).
	Terms fees.Terms
	Log   *slog.Logger
	// Banner, when set, receives the start-up summary (servebanner.go).
	Banner io.Writer
}

// RunServe runs the public screening API on ln until ctx ends, then shuts down within
// server.shutdown_grace.
func RunServe(ctx context.Context, cfg *config.Config, ln ServeListeners, run ServeRun) error {
	defer ln.API.Close()
	if ln.Metrics != nil {
		defer ln.Metrics.Close()
	}
	log, terms := run.Log, run.Terms
	if err := configureEgress(cfg, log, []string{cfg.Server.Listen, cfg.Server.MetricsListen}, ln.API); err != nil {
		return err
	}
	release, err := LockDataDir(cfg.DataDir, "serve", ln.API.Addr().String())
	if err != nil {
		return err
	}
	defer release()
	registry := prometheus.NewRegistry()
	// The Go runtime's and the process's own series (go_*, process_*), as the proxy exports.
	registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	shared, err := build(ctx, cfg, run.Flags, registry, log, "paid calls answer 503 sanctions_data_unavailable")
	if err != nil {
		return err
	}
	defer shared.Close()
	st, keys, scr := shared.Store, shared.Keys, shared.Screening

	fc := cfg.Server.Fees
	facURL, err := fc.Facilitator()
	if err != nil {
		return err
	}
	facilitator := fees.NewFacilitator(facURL, nil, time.Duration(fc.VerifyTimeout), time.Duration(fc.SettleTimeout))
	// The credentials header is read once, here; it is never logged or published (only its name).
	authName, authValue, authSet, err := fc.FacilitatorAuth()
	if err != nil {
		return err
	}
	if authSet {
		facilitator.WithAuth(authName, authValue)
	}
	seller, err := fees.NewSeller(fees.SellerOptions{Terms: terms, Facilitator: facilitator, Signer: keys, Nonces: storeNonces(st)})
	if err != nil {
		return err
	}
	// serve sees no 402s of others; its Index is filled by the prober (and by proxies sharing its store).
	if w := indexWriter(cfg.Index, false, st, shared.IndexCache, registry, log); w != nil {
		defer w.Close()
		defer startProber(ctx, cfg.Index, w, registry, log)()
	}
	checker := screening.NewChecker(screening.CheckerOptions{Sanctions: scr.Sanctions, Domains: scr.Domains,
		NewDomainDays: cfg.Screening.Domain.NewDomainDays})
	health := shared.publicSanctionsStatus()
	srv, err := server.New(server.Options{
		Config:         cfg.Server,
		Rules:          cfg.Rules,
		Seller:         seller,
		Trial:          trial.New(st, cfg.Server.TrialLimit, time.Duration(cfg.Server.TrialRetention), nil),
		Endpoints:      st,
		Deliveries:     st,
		StoreHealth:    publicStoreHealth(st, cfg),
		Preflight:      core.PreflightPort(shared.Engine),
		Checker:        core.CheckerPort(checker),
		Sanctions:      scr.Sanctions,
		RefreshHealth:  health,
		JWKS:           keys.PublicJWKS,
		FacilitatorURL: facilitator.URL(),
		Metrics:        registry,
		Logger:         log,
	})
	if err != nil {
		return err
	}
	mcpHandler, err := servermcp.New(servermcp.Options{Core: srv.Core(), BaseURL: cfg.Server.BaseURL, RefreshHealth: health, Rules: cfg.Rules,
		JWKS: keys.PublicJWKS, Logger: log})
	if err != nil {
		return err
	}
	srv.Mount("/mcp", mcpHandler)
	// The facilitator watch ends with RunServe, whichever way it returns (a listener that fails included): no
	// goroutine of this server logs after it has returned.
	watchCtx, stopWatch := context.WithCancel(ctx)
	var watching sync.WaitGroup
	watching.Go(func() { watchFacilitator(watchCtx, srv, facilitator, log) })
	defer watching.Wait()
	defer stopWatch()

	hs := srv.HTTPServer()
	// After the first load of the sanctions list, so that its peak is not raised by the serving heap target.
	gcPercent := tuneServeGC(ctx)
	log.Info("payguard serve listening", "addr", ln.API.Addr().String(), "base_url", cfg.Server.BaseURL,
		"network", terms.Network, "asset", terms.Asset, "pay_to", terms.PayTo, "facilitator", facilitator.URL(),
		"facilitator_auth_header", authName,
		"kid", keys.ActiveKeyID(), "sanctions_ready", scr.Sanctions.Ready(), "gc_percent", gcPercent)
	errc := make(chan error, 2)
	go func() { errc <- serveUntilClosed(hs, ln.API) }()
	if run.Banner != nil {
		writeServeBanner(ctx, run.Banner, srv, facilitator, cfg.Server, ln.API.Addr().String(), terms)
	}
	var metricsSrv *http.Server
	if ln.Metrics != nil {
		mux := http.NewServeMux()
		mux.Handle("/metrics", promhttp.HandlerFor(registry, promhttp.HandlerOpts{}))
		metricsSrv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, WriteTimeout: 30 * time.Second}
		go func() { errc <- serveUntilClosed(metricsSrv, ln.Metrics) }()
		log.Info("metrics listening", "addr", ln.Metrics.Addr().String())
	}
	select {
	case <-ctx.Done():
		log.Info("shutting down", "grace", cfg.Server.ShutdownGrace.String())
	case err := <-errc:
		hs.Close()
		if metricsSrv != nil {
			metricsSrv.Close()
		}
		return err
	}
	shutCtx, cancel := context.WithTimeout(context.Background(), time.Duration(cfg.Server.ShutdownGrace))
	defer cancel()
	if metricsSrv != nil {
		_ = metricsSrv.Shutdown(shutCtx)
	}
	if err := hs.Shutdown(shutCtx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	return nil
}

// watchFacilitator asks the facilitator's /supported at start and every five minutes, so /status and /health
// say whether paid calls can currently be verified and settled. It never blocks serving.
func watchFacilitator(ctx context.Context, srv *server.Server, f *fees.Facilitator, log *slog.Logger) {
	t := time.NewTicker(5 * time.Minute)
	defer t.Stop()
	healthy := true
	for {
		err := srv.CheckFacilitator(ctx, f)
		switch {
		case err != nil && healthy:
			log.Warn("facilitator check failed: paid calls answer 503 facilitator_unavailable while it stays down",
				"facilitator", f.URL(), "error", err.Error())
		case err == nil && !healthy:
			log.Info("facilitator reachable again", "facilitator", f.URL())
		}
		healthy = err == nil
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// publicStoreHealth is the store's health as the public listener shows it (/health, /readyz, /status, /):
// the error's text without the store file's path or directory: no filesystem path on the public listener.
func publicStoreHealth(st store.Store, cfg *config.Config) func(context.Context) error {
	var paths []string
	for _, p := range []string{cfg.Store.Path, filepath.Dir(cfg.Store.Path), cfg.DataDir} {
		if p == "" || p == "." || p == "/" {
			continue
		}
		paths = append(paths, p)
		if abs, err := filepath.Abs(p); err == nil && abs != p {
			paths = append(paths, abs)
		}
	}
	// Longest first, so that the file is replaced before its directory.
	sort.Slice(paths, func(i, j int) bool { return len(paths[i]) > len(paths[j]) })
	return func(ctx context.Context) error {
		err := store.Healthy(ctx, st)
		if err == nil {
			return nil
		}
		msg := err.Error()
		for _, p := range paths {
			msg = strings.ReplaceAll(msg, p, "<store path>")
		}
		return errors.New(msg)
	}
}

// storeNonces is the never-settle-twice guard on the store, shared by a fleet.
func storeNonces(st store.Store) fees.NonceGuard {
	return fees.NonceGuardFuncs{
		MarkFunc: func(ctx context.Context, key string, ttl time.Duration) error {
			err := st.MarkPaymentSeen(ctx, key, ttl)
			if errors.Is(err, store.ErrAlreadyUsed) {
				return fees.ErrAlreadyUsed
			}
			return err
		},
		ReleaseFunc: st.ForgetPaymentSeen,
	}
}
