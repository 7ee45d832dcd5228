package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/payguard/payguard/receipts"
	screenopen "github.com/payguard/payguard/screening/open"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/payguard/payguard/config"
	"github.com/payguard/payguard/index"
	"github.com/payguard/payguard/preflight"
	"github.com/payguard/payguard/screening"
	"github.com/payguard/payguard/screening/sanctions"
	"github.com/payguard/payguard/server"
	"github.com/payguard/payguard/server/core"
	"github.com/payguard/payguard/server/fees"
	servermcp "github.com/payguard/payguard/server/mcp"
	"github.com/payguard/payguard/server/trial"
	"github.com/payguard/payguard/store"
	"github.com/payguard/payguard/store/open"
)

func init() {
	register("serve", command{summary: "run the public pay-per-call screening API (x402), default 127.0.0.1:8080", run: runServe})
}

func runServe(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	configFile := fs.String("config", "", "YAML configuration file (default: the embedded default)")
	offline := fs.Bool("offline", false, "no network lookups: no sanctions refresh, domain age and DNS unknown")
	sanctionsDir := fs.String("sanctions-dir", "", "directory with OFAC's SDN CSV set or SDN.XML (no refresh); default: the cached list, refreshed daily")
	listen := fs.String("listen", "", "listen address, overrides server.listen (default 127.0.0.1:8080)")
	logLevel := fs.String("log-level", "", "debug, info, warn or error (default: log.level, info)")
	applyDataDir := dataDirFlag(fs)
	if code, done := parseSubcommandFlags(fs, args, stdout); done {
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
	// The log goes to stderr, as the proxy's does; stdout is left for what a command prints.
	log, err := newLogger(stderr, cfg, *logLevel)
	if err != nil {
		fmt.Fprintln(stderr, "payguard serve: --log-level:", err)
		return 2
	}
	terms, err := fees.TermsFromConfig(cfg.Server.Fees)
	if err := serveStartProblems(err, cfg.Server); err != nil {
		fmt.Fprintf(stderr, "payguard serve: %v\n", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := serveAPI(ctx, cfg, terms, screeningFlags{offline: *offline, sanctionsDir: *sanctionsDir}, log, stdout); err != nil {
		fmt.Fprintf(stderr, "payguard serve: %v\n", err)
		return 1
	}
	return 0
}

// serveAPI runs serve until ctx ends; banner, when given, receives the start-up summary (servebanner.go).
func serveAPI(ctx context.Context, cfg *config.Config, terms fees.Terms, sf screeningFlags, log *slog.Logger, banner ...io.Writer) error {
	// Bound first: a port in use fails before anything is created, and egress knows serve's address.
	ln, err := net.Listen("tcp", cfg.Server.Listen)
	if err != nil {
		return fmt.Errorf("listener: %w", err)
	}
	defer ln.Close()
	var mln net.Listener
	if cfg.Server.MetricsListen != "" {
		if mln, err = net.Listen("tcp", cfg.Server.MetricsListen); err != nil {
			return fmt.Errorf("metrics listener: %w", err)
		}
		defer mln.Close()
	}
	if err := configureEgress(cfg, log, []string{cfg.Server.Listen, cfg.Server.MetricsListen}, ln); err != nil {
		return err
	}
	release, err := lockDataDir(cfg.Proxy.DataDir, "serve", ln.Addr().String())
	if err != nil {
		return err
	}
	defer release()
	keys, err := receipts.LoadOrCreate(cfg.Keys.ReceiptKeyFile, time.Now(), log)
	if err != nil {
		return err
	}
	registry := prometheus.NewRegistry()
	// The Go runtime's and the process's own series (go_*, process_*), as the proxy exports.
	registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	scr, err := serveScreening(ctx, cfg, sf, registry, log)
	if err != nil {
		return err
	}
	st, err := open.FromConfig(cfg.Store)
	if err != nil {
		return fmt.Errorf("store: %w", err)
	}
	logStoreWarnings(st, log)
	defer st.Close()

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
	indexCache := index.NewCache(st, 0)
	engine := preflight.New(preflight.Options{Rules: cfg.Rules, Sanctions: scr.sanctions, Domains: scr.domains, Signer: keys,
		Index: indexCache, IndexMaxAge: time.Duration(cfg.Index.Retention)})
	// serve sees no 402s of others; its Index is filled by the prober (and by proxies sharing its store).
	if w := indexWriter(cfg.Index, false, st, indexCache, registry, log); w != nil {
		defer w.Close()
		defer startProber(ctx, cfg.Index, w, registry, log)()
	}
	checker := screening.NewChecker(screening.CheckerOptions{Sanctions: scr.sanctions, Domains: scr.domains,
		NewDomainDays: cfg.Screening.Domain.NewDomainDays})
	srv, err := server.New(server.Options{
		Config:         cfg.Server,
		Rules:          cfg.Rules,
		Seller:         seller,
		Trial:          trial.New(st, cfg.Server.TrialLimit, time.Duration(cfg.Server.TrialRetention), nil),
		Endpoints:      st,
		Deliveries:     st,
		StoreHealth:    publicStoreHealth(st, cfg),
		Preflight:      core.PreflightPort(engine),
		Checker:        core.CheckerPort(checker),
		Sanctions:      scr.sanctions,
		RefreshHealth:  scr.health,
		JWKS:           keys.PublicJWKS,
		FacilitatorURL: facilitator.URL(),
		Metrics:        registry,
		Logger:         log,
	})
	if err != nil {
		return err
	}
	mcpHandler, err := servermcp.New(servermcp.Options{Core: srv.Core(), BaseURL: cfg.Server.BaseURL, RefreshHealth: scr.health, Rules: cfg.Rules,
		JWKS: keys.PublicJWKS, Logger: log})
	if err != nil {
		return err
	}
	srv.Mount("/mcp", mcpHandler)
	// The facilitator watch ends with serveAPI, whichever way it returns (a listener that fails included): no
	// goroutine of this server logs after it has returned.
	watchCtx, stopWatch := context.WithCancel(ctx)
	var watching sync.WaitGroup
	watching.Go(func() { watchFacilitator(watchCtx, srv, facilitator, log) })
	defer watching.Wait()
	defer stopWatch()

	hs := srv.HTTPServer()
	// After the first load of the sanctions list, so that its peak is not raised by the serving heap target.
	gcPercent := tuneServeGC(ctx)
	log.Info("payguard serve listening", "addr", ln.Addr().String(), "base_url", cfg.Server.BaseURL,
		"network", terms.Network, "asset", terms.Asset, "pay_to", terms.PayTo, "facilitator", facilitator.URL(),
		"facilitator_auth_header", authName,
		"kid", keys.ActiveKeyID(), "sanctions_ready", scr.sanctions.Ready(), "gc_percent", gcPercent)
	errc := make(chan error, 2)
	go func() { errc <- serveUntilClosed(hs, ln) }()
	if len(banner) > 0 {
		writeServeBanner(ctx, banner[0], srv, facilitator, cfg.Server, ln.Addr().String(), terms)
	}
	var metricsSrv *http.Server
	if cfg.Server.MetricsListen != "" {
		mux := http.NewServeMux()
		mux.Handle("/metrics", promhttp.HandlerFor(registry, promhttp.HandlerOpts{}))
		metricsSrv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, WriteTimeout: 30 * time.Second}
		go func() { errc <- serveUntilClosed(metricsSrv, mln) }()
		log.Info("metrics listening", "addr", mln.Addr().String())
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

// servingScreening is what the API screens with.
type servingScreening struct {
	sanctions *sanctions.Screener
	domains   screening.Domains
	health    func() any
}

// serveScreening is screening/open's screening for `payguard serve`. With no list the paid routes answer 503
// sanctions_data_unavailable, never an unknown for money.
func serveScreening(ctx context.Context, cfg *config.Config, sf screeningFlags, reg prometheus.Registerer, log *slog.Logger) (servingScreening, error) {
	scr, err := screenopen.Open(ctx, screenopen.Options{Config: cfg.Screening, SanctionsDir: sf.sanctionsDir, Offline: sf.offline,
		Registerer: reg, Logger: log, NoList: "paid calls answer 503 sanctions_data_unavailable"})
	if err != nil {
		return servingScreening{}, err
	}
	// /health and /readyz are on the public listener: the list's kind of source and dates, never its paths.
	health := scr.Status
	if health != nil {
		health = func() any {
			if st, ok := scr.Status().(sanctions.Status); ok {
				return st.Public()
			}
			return nil
		}
	}
	return servingScreening{sanctions: scr.Sanctions, domains: scr.Domains, health: health}, nil
}

// publicStoreHealth is the store's health as the public listener shows it (/health, /readyz, /status, /):
// the error's text without the store file's path or directory: no filesystem path on the public listener.
func publicStoreHealth(st store.Store, cfg *config.Config) func(context.Context) error {
	var paths []string
	for _, p := range []string{cfg.Store.Path, filepath.Dir(cfg.Store.Path), cfg.Proxy.DataDir} {
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
