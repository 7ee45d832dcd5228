// Package open builds the screening a payguard command decides and screens with, from its configuration and
// flags: the one opener `payguard proxy`, `payguard serve`, `payguard check` and `payguard preflight` use
// (as store/open is for the ledger). A long-running process (Open) loads the cached list and refreshes it in
// the background; a one-shot command (LoadOnce) reads a list once and says why there is none.
package open

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/payguard/payguard/config"
	"github.com/payguard/payguard/screening"
	"github.com/payguard/payguard/screening/domain"
	"github.com/payguard/payguard/screening/sanctions"
)

// Options are a long-running process's screening settings.
type Options struct {
	Config       config.ScreeningConfig
	SanctionsDir string // --sanctions-dir: a fixed list, loaded once and never refreshed ("" for none)
	Offline      bool   // --offline: no downloads, no domain lookups
	// Registerer receives the sanctions list's series (also with SanctionsDir); nil registers nothing.
	Registerer prometheus.Registerer
	Logger     *slog.Logger
	// NoList is logged when screening starts without a list, saying what that means for this command.
	NoList string
}

// Screening is what a process screens with.
type Screening struct {
	Sanctions *sanctions.Screener
	Domains   screening.Domains
	// Status describes the list and its refreshes, for /readyz and /health (nil when screening is disabled).
	Status func() any
}

// Open loads the sanctions list (SanctionsDir as given; otherwise the cached copy in the configured cache
// directory, refreshed from the configured sources while ctx lives, unless Offline) and starts the domain
// checker (no lookups when Offline or disabled). Without a list the screener is not Ready: sanctions facts
// are unknown, and each command fails closed on that in its own way (o.NoList says how).
func Open(ctx context.Context, o Options) (*Screening, error) {
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	screener := sanctions.NewScreener(nil)
	out := &Screening{Sanctions: screener}
	sc := o.Config.Sanctions
	switch {
	case o.SanctionsDir != "":
		list, err := sanctions.LoadDir(o.SanctionsDir)
		if err != nil {
			return nil, fmt.Errorf("--sanctions-dir: %w", err)
		}
		screener.Swap(list)
		log.Info("sanctions list loaded", "dir", o.SanctionsDir, "entries", list.Len(), "data_as_of", list.DataAsOf(),
			"data_as_of_source", list.DataAsOfSource())
		warnFileModTime(log, list)
		// Never refreshed, but its age is still watched.
		if o.Registerer != nil {
			if err := o.Registerer.Register(sanctions.NewCollector(screener, nil, time.Now)); err != nil {
				return nil, err
			}
		}
		out.Status = func() any { return sanctions.StatusOf(screener, nil, time.Now()) }
	case sc.Enabled:
		ref, err := sanctions.NewRefresher(screener, sanctions.RefresherConfig{URLs: sc.Sources, CacheDir: sc.CacheDir,
			SeedDir: sc.SeedDir, Interval: time.Duration(sc.RefreshInterval), Logger: log, Registerer: o.Registerer})
		if err != nil {
			return nil, err
		}
		if err := ref.LoadCache(); err != nil {
			log.Warn("no cached sanctions list yet: "+o.NoList, "cache_dir", sc.CacheDir, "error", err.Error())
		} else {
			warnFileModTime(log, screener.List())
		}
		if !o.Offline {
			go ref.Run(ctx)
		}
		out.Status = func() any { return sanctions.StatusOf(screener, ref, time.Now()) }
	default:
		log.Warn("sanctions screening is disabled in the configuration: " + o.NoList)
	}
	dc := o.Config.Domain
	if o.Offline {
		dc.Enabled = false
	}
	d := domain.NewFromConfig(dc)
	if dc.Enabled {
		go d.Run(ctx, log)
	}
	out.Domains = d
	return out, nil
}

// LoadOnce is a one-shot command's list: dir as given (an error if it cannot be read), else the cached copy
// in the configured cache directory. No list is not an error: the list is nil and notice says why
// (sanctions are then reported unknown).
func LoadOnce(c config.SanctionsConfig, dir string) (list *sanctions.List, notice string, err error) {
	if dir != "" {
		list, err := sanctions.LoadDir(dir)
		if err != nil {
			return nil, "", err
		}
		return list, "", nil
	}
	if !c.Enabled {
		return nil, "sanctions screening is disabled in the configuration: sanctions are reported unknown", nil
	}
	if _, err := os.Stat(c.CacheDir); errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Sprintf("no sanctions list (nothing cached in %s; run 'payguard sdn update' or use --sanctions-dir): sanctions are reported unknown", c.CacheDir), nil
	}
	list, err = sanctions.LoadDir(c.CacheDir)
	if err != nil {
		return nil, fmt.Sprintf("no sanctions list (%v; use --sanctions-dir): sanctions are reported unknown", err), nil
	}
	return list, "", nil
}

// warnFileModTime says loudly, at start, when the list's date is only its files' modification time.
func warnFileModTime(log *slog.Logger, l *sanctions.List) {
	if l.DataAsOfSource() == sanctions.AsOfFileModTime {
		log.Warn("SANCTIONS LIST DATE UNKNOWN: "+sanctions.FileModTimeWarning, "data_as_of", l.DataAsOf().UTC(),
			"data_as_of_source", l.DataAsOfSource(), "source", l.Source())
	}
}
