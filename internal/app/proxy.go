package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/payguard/payguard/config"
	"github.com/payguard/payguard/internal/apitoken"
	"github.com/payguard/payguard/policy"
	"github.com/payguard/payguard/proxy"
	"github.com/payguard/payguard/proxy/admin"
	"github.com/payguard/payguard/proxy/mitm"
)

// ProxyListeners are the proxy's two listeners: the agents' (proxy.listen) and the admin API's
// (admin.listen). RunProxy closes them when it returns.
type ProxyListeners struct {
	Proxy, Admin net.Listener
}

// ListenProxy binds proxy.listen and admin.listen. Binding comes first: a start that cannot bind (a port in
// use) fails before it creates anything (no data directory, CA or key left behind).
func ListenProxy(cfg *config.Config) (ProxyListeners, error) {
	p, err := net.Listen("tcp", cfg.Proxy.Listen)
	if err != nil {
		return ProxyListeners{}, fmt.Errorf("proxy listener: %w", err)
	}
	a, err := net.Listen("tcp", cfg.Admin.Listen)
	if err != nil {
		p.Close()
		return ProxyListeners{}, fmt.Errorf("admin listener: %w", err)
	}
	return ProxyListeners{Proxy: p, Admin: a}, nil
}

// ProxyRun is how one `payguard proxy` runs besides its configuration.
type ProxyRun struct {
	Flags
	// ConfigPath is the --config file it started from ("" for the embedded default): what a reload
	// (SIGHUP, POST /v1/reload) reads again; with none there is nothing to reload.
	ConfigPath string
	Log        *slog.Logger
	// Banner, when set, receives the start-up summary once both listeners serve (banner.go).
	Banner io.Writer
}

// RunProxy runs the forward proxy and its admin API on ln until ctx ends, then shuts down gracefully.
func RunProxy(ctx context.Context, cfg *config.Config, ln ProxyListeners, run ProxyRun) error {
	defer ln.Proxy.Close()
	defer ln.Admin.Close()
	log := run.Log
	// payguard's own outbound requests know its addresses before the first one is made.
	if err := configureEgress(cfg, log, []string{cfg.Proxy.Listen, cfg.Admin.Listen}, ln.Proxy, ln.Admin); err != nil {
		return err
	}
	release, err := LockDataDir(cfg.DataDir, "proxy", ln.Proxy.Addr().String())
	if err != nil {
		return err
	}
	defer release()
	caCert, caKey := cfg.CAFiles()
	ca, created, err := mitm.LoadOrCreateCA(caCert, caKey, time.Now())
	if err != nil {
		return err
	}
	if created {
		log.Info("generated the MITM CA; agents must trust its certificate", "ca_cert", caCert, "ca_key", caKey)
	}
	opts, err := proxy.OptionsFromConfig(cfg)
	if err != nil {
		return err
	}
	metrics := proxy.NewMetrics()
	shared, err := build(ctx, cfg, run.Flags, metrics.Registry, log, "until one loads, with screen_sanctions on every payment is held")
	if err != nil {
		return err
	}
	defer shared.Close()
	token, tokenFrom, err := apitoken.Admin(cfg, log)
	if err != nil {
		return err
	}
	decide, decideFrom, err := apitoken.Decide(cfg, log)
	if err != nil {
		return err
	}
	if decide == token {
		return fmt.Errorf("the decide-only token (%s) must differ from the admin token", decideFrom)
	}
	kick, err := startNotify(ctx, cfg, shared.Store, metrics.Registry, log)
	if err != nil {
		return err
	}
	// reload.go: the agents and the rules as one rule set, reloaded on SIGHUP and POST /v1/reload.
	ruleSet, err := proxyRuleSet(cfg, shared.decider)
	if err != nil {
		return err
	}
	journal, err := openJournal(cfg)
	if err != nil {
		return err
	}
	if journal != nil {
		defer journal.Close()
	}
	if w := indexWriter(cfg.Index, cfg.Index.Observe, shared.Store, shared.IndexCache, metrics.Registry, log); w != nil {
		defer w.Close()
		if cfg.Index.Observe {
			opts.Observer = w
		}
		defer startProber(ctx, cfg.Index, w, metrics.Registry, log)()
	}
	opts.Decider, opts.Store, opts.CA, opts.Index, opts.Metrics = shared.Engine, shared.Store, ca, shared.IndexCache, metrics
	opts.Logger, opts.OnHoldChange = log, kick // the domain checker is the engine's (parts.go)
	opts.RuleSet, opts.Journal = ruleSet, journal
	opts.Reloader = proxyReloader(run.ConfigPath, cfg, shared.decider, log)
	p, err := proxy.New(opts)
	if err != nil {
		return err
	}
	defer p.Close()
	reloadOnSIGHUP(ctx, p)

	ready := shared.sanctionsReady(cfg.Rules.ScreenSanctions)
	proxySrv := &http.Server{Handler: p, ReadHeaderTimeout: 30 * time.Second,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelDebug)}
	// The admin listener is proxy/admin over the proxy's Core; it reads the store's holds, the journal and the
	// Index itself.
	adminOpts := admin.Options{Token: token, DecideToken: decide, Hosts: cfg.Admin.AllowedHosts(), Ready: ready,
		SanctionsStatus: shared.Screening.Status, Holds: shared.Store, Index: shared.IndexCache,
		IndexMaxAge: time.Duration(cfg.Index.Retention), CACert: ca.Certificate[0], Metrics: metrics.Handler(), Logger: log}
	if journal != nil {
		adminOpts.Journal = journal
	}
	adminSrv := &http.Server{Handler: admin.New(p, adminOpts),
		ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second, WriteTimeout: 30 * time.Second}
	// After the first load of the sanctions list, as serve does (gc.go).
	gcPercent := tuneProxyGC(ctx)
	log.Info("payguard proxy listening", "proxy", ln.Proxy.Addr().String(), "admin", ln.Admin.Addr().String(),
		"ca_cert", caCert, "tunnel_hosts", cfg.Proxy.TunnelHosts,
		"daily_cap_usd", cfg.Rules.DailyCapUSD.String(), "hold_wait", cfg.Proxy.HoldWait.String(),
		"config_sha256", ruleSet.Hash(), "agents", ruleSet.AgentIDs(), "journal", cfg.Journal.Path, "gc_percent", gcPercent)
	writeBanner(run.Banner, startupInfo{proxyAddr: ln.Proxy.Addr().String(), adminAddr: ln.Admin.Addr().String(),
		caCert: caCert, tokenFrom: tokenFrom, decideFrom: decideFrom, notReady: ready(), reportMode: reportModeOf(ruleSet, log),
		offline: run.Offline})

	errc := make(chan error, 2)
	go func() { errc <- serveUntilClosed(proxySrv, ln.Proxy) }()
	go func() { errc <- serveUntilClosed(adminSrv, ln.Admin) }()
	var serveErr error
	select {
	case <-ctx.Done():
		log.Info("shutting down")
	case serveErr = <-errc:
	}
	shutCtx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	_ = proxySrv.Shutdown(shutCtx)
	_ = adminSrv.Shutdown(shutCtx)
	return serveErr
}

// decider is engineFor as the proxy's rule set takes it.
func (p *parts) decider(r policy.Rules) proxy.Decider { return p.engineFor(r) }

func serveUntilClosed(srv *http.Server, ln net.Listener) error {
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
