package app

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/payguard/payguard/config"
	"github.com/payguard/payguard/index"
	"github.com/payguard/payguard/policy"
	"github.com/payguard/payguard/preflight"
	"github.com/payguard/payguard/receipts"
	"github.com/payguard/payguard/screening/open"
	"github.com/payguard/payguard/screening/sanctions"
	"github.com/payguard/payguard/store"
	storeopen "github.com/payguard/payguard/store/open"
)

// Flags are the command-line settings that change how the parts are built (shared by proxy, serve and
// check): Offline makes no network lookups, SanctionsDir loads a fixed list instead of the cached one.
type Flags struct {
	Offline      bool
	SanctionsDir string
}

// parts are what the proxy and serve both decide with, built once by build.
type parts struct {
	Keys      *receipts.KeySet
	Store     store.Store
	Screening *open.Screening
	// IndexCache is the engine's view of the Endpoint Index: a short-lived cache (a busy endpoint's history
	// is decoded about once per TTL, not per 402), which the proxy warms before each decision and the
	// Index writer invalidates.
	IndexCache *index.Cache
	// Engine decides with the configuration's rules; engineFor makes one for other rules (an agent's).
	Engine     *preflight.Engine
	engineOpts preflight.Options
}

// build loads (or creates) the receipt keys, opens screening (noList is logged when it starts without a
// sanctions list, saying what that means for this process) and the store, and makes the engine over them.
// reg receives screening's series. Close the parts when done.
func build(ctx context.Context, cfg *config.Config, f Flags, reg prometheus.Registerer, log *slog.Logger, noList string) (*parts, error) {
	keys, err := receipts.LoadOrCreate(cfg.Keys.ReceiptKeyFile, time.Now(), log)
	if err != nil {
		return nil, err
	}
	scr, err := open.Open(ctx, open.Options{Config: cfg.Screening, SanctionsDir: f.SanctionsDir, Offline: f.Offline,
		Registerer: reg, Logger: log, NoList: noList})
	if err != nil {
		return nil, err
	}
	st, err := openStore(cfg, log)
	if err != nil {
		return nil, err
	}
	p := &parts{Keys: keys, Store: st, Screening: scr, IndexCache: index.NewCache(st, 0)}
	p.engineOpts = preflight.Options{Rules: cfg.Rules, Sanctions: scr.Sanctions, Domains: scr.Domains, Signer: keys,
		Index: p.IndexCache, IndexMaxAge: time.Duration(cfg.Index.Retention)}
	p.Engine = preflight.New(p.engineOpts)
	return p, nil
}

// engineFor is an engine that shares everything with Engine but its rules.
func (p *parts) engineFor(r policy.Rules) *preflight.Engine {
	o := p.engineOpts
	o.Rules = r
	return preflight.New(o)
}

// Close closes the store.
func (p *parts) Close() error { return p.Store.Close() }

// sanctionsReady is the proxy's readiness: with screen_sanctions on and no list loaded, every payment is
// held (fail closed), and /readyz and the banner say so.
func (p *parts) sanctionsReady(screenSanctions bool) func() error {
	return func() error {
		if screenSanctions && !p.Screening.Sanctions.Ready() {
			return errors.New("no sanctions list loaded: every payment is held")
		}
		return nil
	}
}

// publicSanctionsStatus is the list's status as a public listener may show it (serve's /health and
// /readyz): its kind of source and dates, never its paths. nil when screening keeps no status.
func (p *parts) publicSanctionsStatus() func() any {
	status := p.Screening.Status
	if status == nil {
		return nil
	}
	return func() any {
		if st, ok := status().(sanctions.Status); ok {
			return st.Public()
		}
		return nil
	}
}

// openStore opens the configured store and logs what it reports about itself at start (a Redis whose
// persistence is unknown: store.Warner). Opening takes no context: a store's open is local (bolt) or lazy
// (Redis connects on first use).
func openStore(cfg *config.Config, log *slog.Logger) (store.Store, error) {
	st, err := storeopen.FromConfig(cfg.Store)
	if err != nil {
		return nil, err
	}
	if w, ok := st.(store.Warner); ok {
		for _, m := range w.Warnings() {
			log.Warn(m)
		}
	}
	return st, nil
}
