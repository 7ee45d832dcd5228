package proxy

import "github.com/payguard/payguard/proxy/view"

// Reload: the rules, the allow and block lists and the agents' settings change without a restart, on
// SIGHUP or POST /v1/reload (admin token only; proxy/admin). The new configuration is read and validated whole first
// (Options.Reloader builds a RuleSet, or says why it cannot): a bad file keeps the old rule set and the
// error is logged, counted and returned to the caller. A good one replaces the old with one atomic pointer
// swap; a decision already running finishes with the rule set it loaded (decide loads it once).

// ReloadNow rebuilds the rule set with Options.Reloader and swaps it in; on error the old one stays.
// view.ErrReloadUnavailable: no Reloader.
func (p *Proxy) ReloadNow() (hash string, err error) {
	if p.opts.Reloader == nil {
		return "", view.ErrReloadUnavailable
	}
	rs, err := p.opts.Reloader()
	if err != nil {
		p.metrics.reloads.WithLabelValues("invalid").Inc()
		p.log.Error("reload refused; the previous rules stay active", "config_sha256", p.ruleSet().hash, "error", err.Error())
		return "", err
	}
	p.Reload(rs)
	return rs.hash, nil
}

// Reload makes rs the active rule set.
func (p *Proxy) Reload(rs *RuleSet) {
	old := p.rs.Swap(rs)
	p.metrics.reloads.WithLabelValues("ok").Inc()
	p.log.Info("rules reloaded", "config_sha256", rs.hash, "previous_config_sha256", old.hash, "agents", rs.AgentIDs())
}

// ActiveConfigHash is the hash of the active rule set.
func (p *Proxy) ActiveConfigHash() string { return p.ruleSet().hash }
