package main

import (
	"log/slog"
	"net"

	"github.com/payguard/payguard/config"
	"github.com/payguard/payguard/internal/egress"
)

// configureEgress sets how payguard's own requests (list download, RDAP, facilitator, webhooks) leave: the
// config's egress.proxy, else the environment's proxy unless it is payguard itself. Every listener of this
// process is named, by its configured and its bound address, so a proxy variable that points at any of them
// (the shell README sets up for the agent) is ignored and logged instead of looping payguard through itself.
// Call it once the listeners are bound and before any outbound request.
func configureEgress(cfg *config.Config, log *slog.Logger, configured []string, listeners ...net.Listener) error {
	if err := egress.Default.Configure(cfg.Egress.Proxy); err != nil {
		return err
	}
	egress.Default.SetLogger(log)
	for _, a := range configured {
		egress.Default.AddSelf(a)
	}
	for _, ln := range listeners {
		egress.Default.AddSelf(ln.Addr().String())
	}
	return nil
}
