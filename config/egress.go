package config

import "github.com/payguard/payguard/internal/egress"

// EgressConfig is the `egress:` section: how payguard's own outbound requests (the OFAC list download, RDAP
// and its bootstrap, the facilitator, webhooks) leave the process. See internal/egress and docs/proxy.md.
type EgressConfig struct {
	// Proxy is the egress proxy for payguard's own requests: an http(s)://host:port URL, or "direct" for
	// none. Empty (the default) follows HTTPS_PROXY / HTTP_PROXY / NO_PROXY from the environment, except
	// when they point at payguard's own listener (as they do in a shell set up for the agent): that is
	// ignored, and logged.
	Proxy string `yaml:"proxy"`
}

func (c *EgressConfig) validate() error {
	_, _, err := egress.Parse(c.Proxy)
	return err
}
