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
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/payguard/payguard/config"
	"github.com/payguard/payguard/index"
	"github.com/payguard/payguard/preflight"
	"github.com/payguard/payguard/screening"
	"github.com/payguard/payguard/screening/domain"
	"github.com/payguard/payguard/screening/sanctions"
	"github.com/payguard/payguard/server"
	"github.com/payguard/payguard/server/core"
	"github.com/payguard/payguard/server/fees"
	servermcp "github.com/payguard/payguard/server/mcp"
	"github.com/payguard/payguard/server/trial"
	"github.com/payguard/payguard/store"
	"github.com/payguard/payguard/store/open"
	"github.com/payguard/payguard/x402"
)

func init() {
	register("serve", command{summary: "run the public pay-per-call screening API (x402), default 127.0.0.1:8080", run: runServe})
}

// payToMissing explains the one setting `payguard serve` cannot start without, and how to give it.
const payToMissing = `server.fees.pay_to is not set: the service is paid in USDC and needs the public wallet
address (0x…) that receives its fees. Everything else has a working default. To start:

  payguard config default > payguard.yaml
  # edit payguard.yaml: server.fees.pay_to: "0xYourWallet"  (and server.base_url for a public host)
  payguard serve --config payguard.yaml`

func runServe(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	configFile := fs.String("config", "", "YAML configuration file (default: the embedded default)")
	offline := fs.Bool("offline", false, "no network lookups: no sanctions refresh, domain age and DNS unknown")
	sanctionsDir := fs.String("sanctions-dir", "", "directory with OFAC's SDN CSV set or SDN.XML (no refresh); default: the cached list, refreshed daily")
	listen := fs.String("listen", "", "listen address, overrides server.listen (default 127.0.0.1:8080)")
	logLevel := fs.String("log-level", "", "debug, info, warn or error (default: log.level, info)")
	applyDataDir := dataDirFlag(fs)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: payguard serve [--config FILE] [--data-dir DIR] [--offline] [--sanctions-dir DIR] [--listen ADDR] [--log-level LEVEL]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
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
	terms, err := feeTerms(cfg.Server.Fees)
	if err != nil {
		fmt.Fprintf(stderr, "payguard serve: %v\n", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := serveAPI(ctx, cfg, terms, screeningFlags{offline: *offline, sanctionsDir: *sanctionsDir}, log); err != nil {
		fmt.Fprintf(stderr, "payguard serve: %v\n", err)
		return 1
	}
	return 0
}

// feeTerms completes server.fees from the known USDC table: the asset, its EIP-712 name and version, and
// the v1 network name.
func feeTerms(c config.FeesConfig) (fees.Terms, error) {
	t := fees.Terms{Network: c.Network, Asset: c.Asset, AssetName: c.AssetName, AssetVersion: c.AssetVersion,
		PayTo: c.PayTo, MaxTimeoutSeconds: c.MaxTimeoutSeconds}
	if usdc, ok := x402.USDCOn(c.Network); ok {
		if t.Asset == "" {
			t.Asset = usdc.Address
		}
		if x402.SameAddress(t.Asset, usdc.Address) {
			t.Asset = usdc.Address
			if t.AssetName == "" {
				t.AssetName = usdc.Name
			}
			if t.AssetVersion == "" {
				t.AssetVersion = usdc.Version
			}
		}
	}
	t.NetworkV1, _ = x402.V1Name(c.Network)
	if c.PayTo == "" {
		return t, errors.New(payToMissing)
	}
	if err := t.Validate(); err != nil {
		return t, fmt.Errorf("server.fees: %w (set asset, asset_name and asset_version for a token payguard does not know)", err)
	}
	return t, nil
}

func serveAPI(ctx context.Context, cfg *config.Config, terms fees.Terms, sf screeningFlags, log *slog.Logger) error {
	release, err := lockDataDir(cfg.Proxy.DataDir, "serve", cfg.Server.Listen)
	if err != nil {
		return err
	}
	defer release()
	keys, err := loadOrCreateReceiptKeys(cfg.Keys.ReceiptKeyFile, log)
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
	facilitator := fees.NewFacilitator(fc.FacilitatorURL, nil, time.Duration(fc.VerifyTimeout), time.Duration(fc.SettleTimeout))
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
		StoreHealth:    func(ctx context.Context) error { return store.Healthy(ctx, st) },
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
	go watchFacilitator(ctx, srv, facilitator, log)

	hs := srv.HTTPServer()
	ln, err := net.Listen("tcp", cfg.Server.Listen)
	if err != nil {
		return fmt.Errorf("listener: %w", err)
	}
	// After the first load of the sanctions list, so that its peak is not raised by the serving heap target.
	gcPercent := tuneServeGC()
	log.Info("payguard serve listening", "addr", ln.Addr().String(), "base_url", cfg.Server.BaseURL,
		"network", terms.Network, "asset", terms.Asset, "pay_to", terms.PayTo, "facilitator", facilitator.URL(),
		"kid", keys.ActiveKeyID(), "sanctions_ready", scr.sanctions.Ready(), "gc_percent", gcPercent)
	errc := make(chan error, 2)
	go func() { errc <- serveUntilClosed(hs, ln) }()
	var metricsSrv *http.Server
	if cfg.Server.MetricsListen != "" {
		mln, err := net.Listen("tcp", cfg.Server.MetricsListen)
		if err != nil {
			ln.Close()
			return fmt.Errorf("metrics listener: %w", err)
		}
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

// serveScreening loads the sanctions list: --sanctions-dir as given (never refreshed); otherwise the cached
// copy in screening.sanctions.cache_dir, refreshed daily from screening.sanctions.sources (not with
// --offline). With no list the paid routes answer 503 sanctions_data_unavailable, never an unknown for money.
func serveScreening(ctx context.Context, cfg *config.Config, sf screeningFlags, reg prometheus.Registerer, log *slog.Logger) (servingScreening, error) {
	out := servingScreening{sanctions: sanctions.NewScreener(nil)}
	sc := cfg.Screening.Sanctions
	switch {
	case sf.sanctionsDir != "":
		list, err := sanctions.LoadDir(sf.sanctionsDir)
		if err != nil {
			return out, fmt.Errorf("--sanctions-dir: %w", err)
		}
		out.sanctions.Swap(list)
		log.Info("sanctions list loaded", "dir", sf.sanctionsDir, "entries", list.Len(), "data_as_of", list.DataAsOf(),
			"data_as_of_source", list.DataAsOfSource())
		if err := reg.Register(sanctions.NewCollector(out.sanctions, nil, time.Now)); err != nil {
			return out, err
		}
		out.health = func() any { return sanctions.StatusOf(out.sanctions, nil, time.Now()) }
	case sc.Enabled:
		ref, err := sanctions.NewRefresher(out.sanctions, sanctions.RefresherConfig{URLs: sc.Sources, CacheDir: sc.CacheDir,
			Interval: time.Duration(sc.RefreshInterval), Logger: log, Registerer: reg})
		if err != nil {
			return out, err
		}
		if err := ref.LoadCache(); err != nil {
			log.Warn("no cached sanctions list yet", "error", err.Error())
		}
		if !sf.offline {
			go ref.Run(ctx)
		}
		out.health = func() any { return sanctions.StatusOf(out.sanctions, ref, time.Now()) }
	default:
		log.Warn("sanctions screening is disabled in the configuration: paid calls answer 503 sanctions_data_unavailable")
	}
	dc := cfg.Screening.Domain
	if sf.offline {
		dc.Enabled = false
	}
	d := domain.NewFromConfig(dc)
	if dc.Enabled {
		go d.Run(ctx, log)
	}
	out.domains = d
	return out, nil
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
