package main

import (
	"context"
	"crypto/rand"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	screenopen "github.com/payguard/payguard/screening/open"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/payguard/payguard/config"
	"github.com/payguard/payguard/index"
	"github.com/payguard/payguard/preflight"
	"github.com/payguard/payguard/proxy"
	"github.com/payguard/payguard/proxy/admin"
	"github.com/payguard/payguard/proxy/mitm"
	"github.com/payguard/payguard/receipts"
	"github.com/payguard/payguard/screening"
	"github.com/payguard/payguard/store"
	"github.com/payguard/payguard/store/open"
)

func init() {
	register("proxy", command{summary: "run the forward proxy that guards an agent's x402 payments", run: runProxy})
}

// adminTokenEnv overrides admin.token_file.
const adminTokenEnv = "PAYGUARD_ADMIN_TOKEN"

func runProxy(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("proxy", flag.ContinueOnError)
	fs.SetOutput(stderr)
	configPath := fs.String("config", "", "YAML configuration file (default: the embedded default)")
	offline := fs.Bool("offline", false, "no network lookups: no sanctions download (the cached list or --sanctions-dir is used; with neither, every payment is held), domain age and DNS unknown")
	sanctionsDir := fs.String("sanctions-dir", "", "directory with OFAC's SDN CSV set or SDN.XML")
	logLevel := fs.String("log-level", "", "debug, info, warn or error (default: log.level, info)")
	listen := fs.String("listen", "", "proxy listen address, overrides proxy.listen (default 127.0.0.1:8402)")
	applyDataDir := dataDirFlag(fs)
	if code, done := parseSubcommandFlags(fs, args, stdout); done {
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
	log, err := newLogger(stderr, cfg, *logLevel)
	if err != nil {
		fmt.Fprintln(stderr, "payguard proxy: --log-level:", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	proxyConfigPath = *configPath // opsproxy.go: what a reload reads again
	if err := serveProxy(ctx, cfg, screeningFlags{offline: *offline, sanctionsDir: *sanctionsDir}, log, stdout); err != nil {
		fmt.Fprintln(stderr, "payguard proxy:", err)
		return 1
	}
	return 0
}

// serveProxy wires the proxy from the configuration and serves until ctx ends, then shuts down gracefully.
// Once both listeners are up it writes a short summary for the operator to banner: where the proxy and the
// admin API listen, which certificate agents must trust, and where the admin token is.
func serveProxy(ctx context.Context, cfg *config.Config, sf screeningFlags, log *slog.Logger, banner io.Writer) error {
	// The listeners first: a start that cannot bind (a port in use) fails before it creates anything (no data
	// directory, CA or key left behind), and payguard's own outbound requests know its addresses before the
	// first one is made (configureEgress).
	proxyLn, err := net.Listen("tcp", cfg.Proxy.Listen)
	if err != nil {
		return fmt.Errorf("proxy listener: %w", err)
	}
	defer proxyLn.Close()
	adminLn, err := net.Listen("tcp", cfg.Admin.Listen)
	if err != nil {
		return fmt.Errorf("admin listener: %w", err)
	}
	defer adminLn.Close()
	if err := configureEgress(cfg, log, []string{cfg.Proxy.Listen, cfg.Admin.Listen}, proxyLn, adminLn); err != nil {
		return err
	}
	release, err := lockDataDir(cfg.Proxy.DataDir, "proxy", proxyLn.Addr().String())
	if err != nil {
		return err
	}
	defer release()
	caCert, caKey := caFiles(cfg.Proxy)
	ca, created, err := mitm.LoadOrCreateCA(caCert, caKey, time.Now())
	if err != nil {
		return err
	}
	if created {
		log.Info("generated the MITM CA; agents must trust its certificate", "ca_cert", caCert, "ca_key", caKey)
	}
	roots, err := upstreamRoots(cfg.Proxy.UpstreamCAFiles)
	if err != nil {
		return err
	}
	keys, err := receipts.LoadOrCreate(cfg.Keys.ReceiptKeyFile, time.Now(), log)
	if err != nil {
		return err
	}
	metrics := proxy.NewMetrics()
	scr, err := openScreening(ctx, cfg, sf, metrics.Registry, log)
	if err != nil {
		return err
	}
	st, err := openStore(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer st.Close()
	token, tokenFrom, err := adminToken(cfg, log)
	if err != nil {
		return err
	}
	decide, decideFrom, err := decideToken(cfg, log)
	if err != nil {
		return err
	}
	if decide == token {
		return fmt.Errorf("the decide-only token (%s) must differ from the admin token", decideFrom)
	}

	kick, err := startNotify(ctx, cfg, st, metrics.Registry, log)
	if err != nil {
		return err
	}

	// The engine reads the Index through a short-lived cache (a busy endpoint's history is decoded about once
	// per TTL, not per 402), which the proxy warms before the budget lock.
	indexCache := index.NewCache(st, 0)
	engineOpts := preflight.Options{Rules: cfg.Rules, Sanctions: scr.sanctions, Domains: scr.domains, Signer: keys,
		Index: indexCache, IndexMaxAge: time.Duration(cfg.Index.Retention)}
	engine := preflight.New(engineOpts)
	// opsproxy.go: the agents and the rules as one rule set, reloaded on SIGHUP and POST /v1/reload.
	newEngine := engineFactory(engineOpts)
	ruleSet, err := proxyRuleSet(cfg, newEngine)
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
	var observer proxy.Observer
	if w := indexWriter(cfg.Index, cfg.Index.Observe, st, indexCache, metrics.Registry, log); w != nil {
		defer w.Close()
		if cfg.Index.Observe {
			observer = w
		}
		defer startProber(ctx, cfg.Index, w, metrics.Registry, log)()
	}
	p, err := proxy.New(proxy.Options{
		Observer: observer, Index: indexCache, IndexMaxAge: time.Duration(cfg.Index.Retention),
		Metrics: metrics,
		Decider: engine, Store: st, CA: ca, Rules: cfg.Rules, Budget: cfg.Proxy.Budget,
		TunnelHosts: cfg.Proxy.TunnelHosts, UpstreamRoots: roots, Upgrades: proxy.UpgradePolicy(cfg.Proxy.Upgrades),
		HoldWait: time.Duration(cfg.Proxy.HoldWait), HoldTTL: time.Duration(cfg.Proxy.HoldTTL),
		TicketTTLMax: time.Duration(cfg.Proxy.TicketTTLMax), MaxUnpaidPerSite: cfg.Proxy.MaxUnpaidPerSite,
		CertCacheSize: cfg.Proxy.CertCacheSize, MaxIdleConnsPerHost: cfg.Proxy.MaxIdleConnsPerHost,
		Domains: scr.domains, Logger: log, OnHoldChange: kick,
		RuleSet: ruleSet, Journal: journal, Reloader: proxyReloader(proxyConfigPath, cfg, newEngine, log),
	})
	if err != nil {
		return err
	}
	defer p.Close()
	reloadOnSIGHUP(ctx, p)

	proxySrv := &http.Server{Addr: cfg.Proxy.Listen, Handler: p, ReadHeaderTimeout: 30 * time.Second,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelDebug)}
	// The admin listener is proxy/admin over the proxy's Core; it reads the store's holds, the journal and the
	// Index itself.
	adminOpts := admin.Options{Token: token, DecideToken: decide, Hosts: cfg.Admin.AllowedHosts(), Ready: scr.ready,
		SanctionsStatus: scr.status, Holds: st, Index: indexCache, IndexMaxAge: time.Duration(cfg.Index.Retention),
		CACert: ca.Certificate[0], Logger: log}
	if journal != nil {
		adminOpts.Journal = journal
	}
	adminSrv := &http.Server{Addr: cfg.Admin.Listen, Handler: admin.New(p, adminOpts),
		ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second, WriteTimeout: 30 * time.Second}
	log.Info("payguard proxy listening", "proxy", proxyLn.Addr().String(), "admin", adminLn.Addr().String(),
		"ca_cert", caCert, "tunnel_hosts", cfg.Proxy.TunnelHosts,
		"daily_cap_usd", cfg.Rules.DailyCapUSD.String(), "hold_wait", cfg.Proxy.HoldWait.String(),
		"config_sha256", ruleSet.Hash(), "agents", ruleSet.AgentIDs(), "journal", cfg.Journal.Path)
	writeBanner(banner, startupInfo{proxyAddr: proxyLn.Addr().String(), adminAddr: adminLn.Addr().String(),
		caCert: caCert, tokenFrom: tokenFrom, decideFrom: decideFrom, notReady: scr.ready(), reportMode: reportModeOf(ruleSet, log)})

	errc := make(chan error, 2)
	go func() { errc <- serveUntilClosed(proxySrv, proxyLn) }()
	go func() { errc <- serveUntilClosed(adminSrv, adminLn) }()
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

func serveUntilClosed(srv *http.Server, ln net.Listener) error {
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// upstreamRoots is the system pool plus the configured extra roots.
func upstreamRoots(files []string) (*x509.CertPool, error) {
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		pool = x509.NewCertPool()
	}
	for _, f := range files {
		pem, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("proxy.upstream_ca_files: %w", err)
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("proxy.upstream_ca_files: %s holds no PEM certificate", f)
		}
	}
	return pool, nil
}

// adminToken is PAYGUARD_ADMIN_TOKEN, else admin.token_file, else a token generated into the data dir
// (reused on later starts). from says where it came from, for the operator: the variable's name or a file.
func adminToken(cfg *config.Config, log *slog.Logger) (token, from string, err error) {
	return bearerToken("admin", adminTokenEnv, cfg.Admin.TokenFile, filepath.Join(cfg.Proxy.DataDir, "admin-token"), log)
}

// decideToken is the in-process guards' token (their sidecar option): PAYGUARD_DECIDE_TOKEN, else one
// generated into <data_dir>/decide-token. It may call POST /v1/decide and nothing else, so that an agent
// given it cannot approve its own holds (admin.Options.DecideToken).
func decideToken(cfg *config.Config, log *slog.Logger) (token, from string, err error) {
	return bearerToken("decide", decideTokenEnv, "", filepath.Join(cfg.Proxy.DataDir, "decide-token"), log)
}

// decideTokenEnv sets the decide-only token.
const decideTokenEnv = "PAYGUARD_DECIDE_TOKEN"

// bearerToken is the environment variable, else the configured file, else a token generated into path.
func bearerToken(kind, env, file, path string, log *slog.Logger) (token, from string, err error) {
	if t := strings.TrimSpace(os.Getenv(env)); t != "" {
		if len(t) < minTokenLen {
			return "", "", fmt.Errorf("%s token in %s is shorter than %d characters", kind, env, minTokenLen)
		}
		return t, "$" + env, nil
	}
	if file != "" {
		t, err := readToken(file)
		return t, file, err
	}
	if t, err := readToken(path); err == nil {
		log.Info(kind+" API token", "file", path)
		return t, path, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", "", err
	}
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", "", fmt.Errorf("%s token: %w", kind, err)
	}
	t := hex.EncodeToString(b[:])
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", "", fmt.Errorf("%s token: %w", kind, err)
	}
	if _, err := f.WriteString(t + "\n"); err != nil {
		f.Close()
		return "", "", fmt.Errorf("%s token: %w", kind, err)
	}
	if err := f.Close(); err != nil {
		return "", "", fmt.Errorf("%s token: %w", kind, err)
	}
	log.Info("generated a token", "kind", kind, "file", path)
	return t, path, nil
}

// minTokenLen refuses tokens short enough to guess.
const minTokenLen = 16

func readToken(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("admin token: %w", err)
	}
	t := strings.TrimSpace(string(b))
	if len(t) < minTokenLen {
		return "", fmt.Errorf("admin token in %s is shorter than %d characters", path, minTokenLen)
	}
	return t, nil
}

// screeningFlags are the command-line overrides shared with `payguard check`.
type screeningFlags struct {
	offline      bool
	sanctionsDir string
}

// proxyScreening is what the engine screens with, and whether the proxy is ready to decide.
type proxyScreening struct {
	sanctions screening.Sanctions
	domains   screening.Domains
	ready     func() error
	status    func() any // the list and its refreshes, for /readyz
}

// openScreening is screening/open's screening for the proxy. Without a list, sanctions facts are unknown:
// with screen_sanctions on the engine then holds every payment (fail closed), and /readyz says so.
func openScreening(ctx context.Context, cfg *config.Config, sf screeningFlags, reg prometheus.Registerer, log *slog.Logger) (proxyScreening, error) {
	scr, err := screenopen.Open(ctx, screenopen.Options{Config: cfg.Screening, SanctionsDir: sf.sanctionsDir, Offline: sf.offline,
		Registerer: reg, Logger: log, NoList: "until one loads, with screen_sanctions on every payment is held"})
	if err != nil {
		return proxyScreening{}, err
	}
	return proxyScreening{sanctions: scr.Sanctions, domains: scr.Domains, status: scr.Status, ready: func() error {
		if cfg.Rules.ScreenSanctions && !scr.Sanctions.Ready() {
			return errors.New("no sanctions list loaded: every payment is held")
		}
		return nil
	}}, nil
}

func openStore(_ context.Context, cfg *config.Config, log *slog.Logger) (store.Store, error) {
	st, err := open.FromConfig(cfg.Store)
	if err != nil {
		return nil, err
	}
	logStoreWarnings(st, log)
	return st, nil
}

// logStoreWarnings logs what a store reports about itself at start (a Redis whose persistence is unknown).
func logStoreWarnings(st store.Store, log *slog.Logger) {
	if w, ok := st.(store.Warner); ok {
		for _, m := range w.Warnings() {
			log.Warn(m)
		}
	}
}

// caFiles are the configured MITM CA files; both left empty means <data_dir>/ca/, so that a config that
// moves data_dir moves the CA with it.
func caFiles(c config.ProxyConfig) (cert, key string) {
	if c.CACertFile == "" && c.CAKeyFile == "" {
		dir := filepath.Join(c.DataDir, "ca")
		return filepath.Join(dir, mitm.CACertFileName), filepath.Join(dir, mitm.CAKeyFileName)
	}
	return c.CACertFile, c.CAKeyFile
}

// startupInfo is what an operator needs to point an agent at a freshly started proxy.
type startupInfo struct {
	proxyAddr, adminAddr string
	caCert               string
	tokenFrom            string // "$PAYGUARD_ADMIN_TOKEN" or a file
	decideFrom           string // "$PAYGUARD_DECIDE_TOKEN" or a file
	notReady             error  // why decisions will hold everything, if they will
	reportMode           string // who is in report (shadow) mode, if anyone: nothing of theirs is refused
}

// writeBanner prints the start-up summary: plain text for a person, next to the JSON log on stderr.
func writeBanner(w io.Writer, s startupInfo) {
	if w == nil {
		return
	}
	var b strings.Builder
	ca := absPath(s.caCert)
	proxyURL := "http://" + s.proxyAddr
	adminURL := "http://" + s.adminAddr
	token := "$(cat " + shellQuote(absPath(s.tokenFrom)) + ")"
	if strings.HasPrefix(s.tokenFrom, "$") {
		token = s.tokenFrom
	}
	fmt.Fprintf(&b, `payguard proxy is running
  proxy      %[1]s
  admin API  %[2]s  (holds, budget; /healthz /readyz /metrics /ca.pem need no token)
  console    %[2]s/  (approve or deny holds in a browser; sign in with the admin token)
  MITM CA    %[3]s
  admin token from %[4]s
  decide-only token from %[6]s  (for in-process guards' sidecar option: POST /v1/decide, never approvals)

Point an agent at it (or: eval "$(payguard env)" with this one's --config / --data-dir; --for node or python):
  export HTTP_PROXY=%[1]s HTTPS_PROXY=%[1]s http_proxy=%[1]s  (curl reads only the lower-case http_proxy)
  export SSL_CERT_FILE=%[3]s REQUESTS_CA_BUNDLE=%[3]s NODE_EXTRA_CA_CERTS=%[3]s CURL_CA_BUNDLE=%[3]s
  (SSL_CERT_FILE, REQUESTS_CA_BUNDLE and CURL_CA_BUNDLE replace the system roots: enough while every HTTPS
  host goes through payguard; add the system bundle for hosts in tunnel_hosts or NO_PROXY.)
List pending holds (or open the console, or run payguard holds list):
  curl -H "Authorization: Bearer %[5]s" '%[2]s/v1/holds?status=pending'
`, proxyURL, adminURL, ca, absPath(s.tokenFrom), token, absPath(s.decideFrom))
	if s.notReady != nil {
		fmt.Fprintf(&b, "\nNOT READY: %v; /readyz answers 503 and no payment is allowed until a list loads.\n"+
			"  Give one with --sanctions-dir DIR (OFAC's SDN CSV set or SDN.XML), or wait for the download.\n", s.notReady)
	}
	if s.reportMode != "" {
		fmt.Fprintf(&b, "\nREPORT MODE (%s): blocks and holds are logged as would_block / would_hold and NOT enforced.\n", s.reportMode)
	}
	_, _ = io.WriteString(w, b.String())
}

func absPath(p string) string {
	if strings.HasPrefix(p, "$") {
		return p
	}
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

// shellQuote quotes a path for a copy-and-paste shell command.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+:") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
