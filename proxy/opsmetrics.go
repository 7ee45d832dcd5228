package proxy

import "github.com/prometheus/client_golang/prometheus"

// opsMetrics are the series an operator of a fleet of agents reads: decisions per agent (labels bounded to
// the configured agents, "default" and "other"), agents refused at the door, journal failures, reloads, and
// the active rule set (its config hash) as a gauge.
type opsMetrics struct {
	agentDecisions *prometheus.CounterVec
	agentRefused   prometheus.Counter
	journalErrors  prometheus.Counter
	reloads        *prometheus.CounterVec
}

func newOpsMetrics(reg *prometheus.Registry) opsMetrics {
	m := opsMetrics{
		agentDecisions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "payguard_agent_decisions_total", Help: "Proxy decisions by agent (configured agents, default, other) and outcome.",
		}, []string{"agent", "outcome"}),
		agentRefused: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "payguard_agent_auth_refused_total", Help: "Requests and CONNECTs refused with 407: missing or wrong agent credentials.",
		}),
		journalErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "payguard_journal_errors_total", Help: "Decisions the decision journal failed to record.",
		}),
		reloads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "payguard_config_reloads_total", Help: "Rule reloads (SIGHUP or POST /v1/reload), by result (ok, invalid).",
		}, []string{"result"}),
	}
	reg.MustRegister(m.agentDecisions, m.agentRefused, m.journalErrors, m.reloads)
	return m
}

var (
	configInfoDesc = prometheus.NewDesc("payguard_config_info",
		"The active rule set: its config hash (also in every receipt's context.config_sha256).", []string{"config_sha256"}, nil)
	reportModeDesc = prometheus.NewDesc("payguard_report_mode",
		"1 when the global mode is report (shadow: rules are logged, not enforced), else 0.", nil, nil)
	reportAgentsDesc = prometheus.NewDesc("payguard_report_mode_agents",
		"Agents decided in report (shadow) mode: the configured ones in report mode, and default when the global mode is.", nil, nil)
)

// ruleSetCollector reads the active rule set at scrape time.
type ruleSetCollector struct{ p *Proxy }

func (c ruleSetCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- configInfoDesc
	ch <- reportModeDesc
	ch <- reportAgentsDesc
}

func (c ruleSetCollector) Collect(ch chan<- prometheus.Metric) {
	rs := c.p.ruleSet()
	ch <- prometheus.MustNewConstMetric(configInfoDesc, prometheus.GaugeValue, 1, rs.hash)
	global, agents := rs.Report()
	g := 0.0
	if global {
		g = 1
		agents++ // the default identity
	}
	ch <- prometheus.MustNewConstMetric(reportModeDesc, prometheus.GaugeValue, g)
	ch <- prometheus.MustNewConstMetric(reportAgentsDesc, prometheus.GaugeValue, float64(agents))
}

// ModeStatus is the /readyz detail of report mode: nil when every decision is enforced.
func (rs *RuleSet) ModeStatus() map[string]any {
	global, _ := rs.Report()
	var agents []string
	for _, id := range rs.AgentIDs() {
		if rs.agents[id].report {
			agents = append(agents, id)
		}
	}
	if !global && len(agents) == 0 {
		return nil
	}
	return map[string]any{"report": global, "report_agents": agents,
		"warning": "report (shadow) mode: blocks and holds are logged as would_block / would_hold and NOT enforced"}
}
