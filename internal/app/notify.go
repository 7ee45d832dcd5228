package app

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/payguard/payguard/config"
	"github.com/payguard/payguard/proxy/notify"
)

// startNotify starts the hold notifications when admin.notify.webhooks names any: a watcher over the
// store's holds and a sender with a bounded queue per webhook, both running until ctx ends, and the
// payguard_notify_events_total counters. It returns the kick the proxy calls after it writes a hold (nil
// when nothing is configured).
func startNotify(ctx context.Context, cfg *config.Config, src notify.Source, reg prometheus.Registerer, log *slog.Logger) (func(), error) {
	n := cfg.Admin.Notify
	if len(n.Webhooks) == 0 {
		return nil, nil
	}
	var targets []notify.Target
	for i, w := range n.Webhooks {
		u, secret, err := w.Resolve()
		if err != nil {
			return nil, fmt.Errorf("admin.notify.webhooks[%d]: %w", i, err)
		}
		targets = append(targets, notify.Target{URL: u, Secret: secret})
	}
	sender := notify.NewSender(notify.Options{Targets: targets, QueueSize: n.QueueSize, MaxAttempts: n.MaxAttempts,
		Timeout: time.Duration(n.Timeout), Logger: log})
	consoleURL := n.ConsoleURL
	if consoleURL == "" {
		consoleURL = "http://" + cfg.Admin.Listen + "/"
	}
	w := notify.NewWatcher(notify.WatcherOptions{Source: src, Sink: sender, Budget: cfg.Proxy.Budget,
		CapMicros: int64(cfg.Rules.DailyCapUSD), ConsoleURL: consoleURL, Poll: time.Duration(n.Poll), Logger: log})
	for result, c := range map[string]*atomic.Int64{"sent": &sender.Sent, "failed": &sender.Failed, "dropped": &sender.Dropped} {
		reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "payguard_notify_events_total",
			Help:        "Hold events per webhook delivery outcome: sent (2xx), failed (given up after retries), dropped (queue full).",
			ConstLabels: prometheus.Labels{"result": result}}, func() float64 { return float64(c.Load()) }))
	}
	go sender.Run(ctx)
	go w.Run(ctx)
	log.Info("hold notifications on", "webhooks", len(targets), "console_url", consoleURL)
	return w.Kick, nil
}
