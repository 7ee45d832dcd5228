package app

import (
	"context"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/payguard/payguard/config"
	"github.com/payguard/payguard/policy"
	"github.com/payguard/payguard/proxy"
)

// proxyRuleSet builds the proxy's rule set (rules, agents, unauthenticated) from cfg; newEngine makes the
// engine for one agent's rules.
func proxyRuleSet(cfg *config.Config, newEngine func(policy.Rules) proxy.Decider) (*proxy.RuleSet, error) {
	agents, err := cfg.ResolveAgents()
	if err != nil {
		return nil, err
	}
	rc := proxy.RuleSetConfig{Hash: config.RuleSetHash(cfg.Rules, agents, cfg.Agents.Unauthenticated, cfg.Agents.Mode), Rules: cfg.Rules, Mode: cfg.Agents.Mode,
		RefuseUnauthenticated: cfg.Agents.Unauthenticated == "refuse"}
	for _, a := range agents {
		rc.Agents = append(rc.Agents, proxy.AgentConfig{ID: a.ID, SecretSHA256: a.SecretSHA256, DailyCapUSD: a.DailyCapUSD, Rules: a.Rules, Mode: a.Mode})
	}
	return proxy.NewRuleSet(rc, nil, newEngine)
}

// proxyReloader rereads the configuration file and builds its rule set. Only the rules and the agents
// change on a reload; a change to any other setting is logged as needing a restart.
func proxyReloader(path string, started *config.Config, newEngine func(policy.Rules) proxy.Decider, log *slog.Logger) func() (*proxy.RuleSet, error) {
	if path == "" {
		return nil
	}
	return func() (*proxy.RuleSet, error) {
		cfg, err := config.Load(path)
		if err != nil {
			return nil, err
		}
		if cfg.Proxy.Budget != started.Proxy.Budget || cfg.Journal != started.Journal {
			log.Warn("reload: settings other than rules and agents changed; they apply at the next restart")
		}
		return proxyRuleSet(cfg, newEngine)
	}
}

// reloadOnSIGHUP reloads the proxy's rules on each SIGHUP until ctx ends.
func reloadOnSIGHUP(ctx context.Context, p *proxy.Proxy) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	go func() {
		defer signal.Stop(hup)
		for {
			select {
			case <-ctx.Done():
				return
			case <-hup:
				p.ReloadNow() // logs and counts either way; a bad file keeps the old rules
			}
		}
	}()
}

// openJournal opens the decision journal when journal.path is set.
func openJournal(cfg *config.Config) (*proxy.Journal, error) {
	if cfg.Journal.Path == "" {
		return nil, nil
	}
	return proxy.OpenJournal(cfg.Journal.Path, cfg.Journal.MaxBytes, cfg.Journal.MaxFiles)
}

// reportModeOf says who is in report (shadow) mode, for the banner, and logs it as a warning; "" when nobody.
func reportModeOf(rs *proxy.RuleSet, log *slog.Logger) string {
	m := rs.ModeStatus()
	if m == nil {
		return ""
	}
	who := "agents " + strings.Join(m["report_agents"].([]string), ", ")
	if m["report"] == true {
		who = "global: every agent without mode: enforce"
	}
	log.Warn("report (shadow) mode: blocks and holds are logged, not enforced", "who", who)
	return who
}
