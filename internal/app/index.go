package app

import (
	"context"
	"log/slog"
	"net/netip"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/payguard/payguard/config"
	"github.com/payguard/payguard/index"
	"github.com/payguard/payguard/index/probe"
	"github.com/payguard/payguard/store"
)

// indexWriter starts the observation writer when anything writes observations (the proxy observing, or the
// prober); nil when nothing does. Close it on shutdown.
// Its writes invalidate cache, the engine's view of the Index.
func indexWriter(c config.IndexConfig, observing bool, st store.Endpoints, cache *index.Cache, reg prometheus.Registerer, log *slog.Logger) *index.Writer {
	if !observing && !c.Probe.Enabled {
		return nil
	}
	return index.NewWriter(st, index.WriterOptions{Queue: c.Queue, Coalesce: time.Duration(c.Coalesce), Registry: reg, Logger: log,
		Keep: store.Retention{MaxPerURL: c.MaxPerEndpoint, MaxAge: time.Duration(c.Retention)}, Writing: cache.Writing})
}

// startProber starts the opt-in prober when index.probe.enabled, writing through w; the returned function
// stops it and waits for its round to end.
func startProber(ctx context.Context, c config.IndexConfig, w *index.Writer, reg prometheus.Registerer, log *slog.Logger) func() {
	pc := c.Probe
	if !pc.Enabled || w == nil {
		return func() {}
	}
	var allow []netip.Prefix
	for _, s := range pc.AllowPrivate {
		allow = append(allow, netip.MustParsePrefix(s)) // validated with the config
	}
	p := probe.New(probe.Options{Endpoints: pc.Endpoints, DiscoveryURLs: pc.DiscoveryURLs, Interval: time.Duration(pc.Interval),
		PerHostInterval: time.Duration(pc.PerHostInterval), Timeout: time.Duration(pc.Timeout), MaxBodyBytes: pc.MaxBodyBytes,
		MaxEndpoints: pc.MaxEndpoints, Guard: probe.Guard{Allow: allow}, Observer: w, Registry: reg, Logger: log})
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); p.Run(ctx) }()
	log.Info("index prober started", "endpoints", len(pc.Endpoints), "discovery_urls", len(pc.DiscoveryURLs), "interval", pc.Interval.String())
	return func() { cancel(); <-done }
}
