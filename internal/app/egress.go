package app

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
	self := configured
	for _, ln := range listeners {
		self = append(self, ln.Addr().String())
	}
	return egress.Default.Setup(cfg.Egress.Proxy, log, self...)
}
