package proxy

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"github.com/payguard/payguard/policy"
)

// A RuleSet is everything a decision reads from the configuration that can change without a restart: the
// global rules, the agents (their secrets, caps, modes and rule overrides), what an unauthenticated agent
// is, and the shadow mode. It is immutable once built; the proxy holds the active one behind one atomic
// pointer (Reload swaps it), and a decision loads it once and uses only that one, so no decision ever sees
// half of one rule set and half of another.
type RuleSet struct {
	hash     string
	rules    policy.Rules
	agents   map[string]*agentRules
	fallback *agentRules // the unauthenticated agent's identity; nil when unauthenticated agents are refused
	report   bool        // the global mode is report (shadow)
}

// agentRules is one agent's view of a rule set: its rules (the global ones, or its tightened override, with
// its own daily cap as daily_cap_usd), and the engine that decides with them.
type agentRules struct {
	id        string
	secret    [32]byte // SHA-256 of the agent's secret
	hasSecret bool
	capMicros int64 // the agent's own daily cap; 0: only the global cap binds
	report    bool  // this agent is in report (shadow) mode
	rules     policy.Rules
	decider   Decider
}

// DefaultAgent is the identity of an agent that sent no credentials, when unauthenticated agents are let in;
// OtherAgent is the metrics label of anything that is not a configured agent (bounded label cardinality).
const (
	DefaultAgent = "default"
	OtherAgent   = "other"
)

// Modes.
const (
	ModeEnforce = "enforce"
	ModeReport  = "report"
)

// AgentConfig is one configured agent. SecretSHA256 is the SHA-256 of its secret (the proxy never keeps the
// secret itself). Rules, when set, replace the global rules for this agent and must be no looser than them
// (CheckTightens); DailyCapUSD > 0 is its own cap, on top of the global one, which still binds the sum.
type AgentConfig struct {
	ID           string
	SecretSHA256 [32]byte
	DailyCapUSD  policy.USD
	Mode         string // "" inherits the global mode
	Rules        *policy.Rules
}

// RuleSetConfig is what a RuleSet is built from. Hash names the configuration it came from (the SHA-256 of
// the file's reloadable parts, config.RuleSetHash); it goes into metrics and every receipt's context.
type RuleSetConfig struct {
	Hash   string
	Rules  policy.Rules
	Mode   string // enforce (default) | report
	Agents []AgentConfig
	// RefuseUnauthenticated: a request without valid agent credentials is answered 407; otherwise it is
	// decided as the "default" agent, under the global rules.
	RefuseUnauthenticated bool
}

var agentIDPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9_.-]{0,62}$`)

// ValidAgentID says whether id can name an agent: 1 to 63 of a-z 0-9 _ . -, not "default" or "other".
func ValidAgentID(id string) bool {
	return agentIDPattern.MatchString(id) && id != DefaultAgent && id != OtherAgent
}

// NewRuleSet validates c and builds its rule set; newDecider makes the engine for one set of rules (nil:
// every agent shares def, which must then be the engine of c.Rules, and no agent may override rules or
// have its own cap; def nil means the proxy's Options.Decider).
// Every problem is reported, and nothing is built when there is one, so a bad reload keeps the old set.
func NewRuleSet(c RuleSetConfig, def Decider, newDecider func(policy.Rules) Decider) (*RuleSet, error) {
	var errs []error
	report, err := parseMode("mode", c.Mode, false)
	errs = append(errs, err)
	if err := c.Rules.Validate(); err != nil {
		errs = append(errs, err)
	}
	decider := func(r policy.Rules) Decider {
		if newDecider == nil {
			return def
		}
		return newDecider(r)
	}
	rs := &RuleSet{hash: c.Hash, rules: c.Rules.Clone(), agents: map[string]*agentRules{}, report: report}
	base := &agentRules{id: DefaultAgent, report: report, rules: rs.rules}
	if !c.RefuseUnauthenticated {
		rs.fallback = base
	}
	for i, a := range c.Agents {
		where := fmt.Sprintf("agents[%d] (%s)", i, a.ID)
		if !ValidAgentID(a.ID) {
			errs = append(errs, fmt.Errorf("%s: an agent id is 1 to 63 of a-z 0-9 _ . - (not %q or %q)", where, DefaultAgent, OtherAgent))
			continue
		}
		if rs.agents[a.ID] != nil {
			errs = append(errs, fmt.Errorf("%s: agent id listed twice", where))
			continue
		}
		ar := &agentRules{id: a.ID, secret: a.SecretSHA256, hasSecret: a.SecretSHA256 != [32]byte{}, rules: rs.rules}
		if !ar.hasSecret {
			errs = append(errs, fmt.Errorf("%s: no secret", where))
		}
		if ar.report, err = parseMode(where+".mode", a.Mode, report); err != nil {
			errs = append(errs, err)
		}
		if a.DailyCapUSD < 0 {
			errs = append(errs, fmt.Errorf("%s: daily_cap_usd must not be negative", where))
		}
		if newDecider == nil && a.DailyCapUSD > 0 {
			errs = append(errs, fmt.Errorf("%s: an agent's own cap needs an engine per agent", where))
		}
		if a.Rules != nil {
			if newDecider == nil {
				errs = append(errs, fmt.Errorf("%s: rule overrides need an engine per agent", where))
			}
			if err := a.Rules.Validate(); err != nil {
				errs = append(errs, fmt.Errorf("%s.rules: %w", where, err))
			} else if err := CheckTightens(rs.rules, *a.Rules); err != nil {
				errs = append(errs, fmt.Errorf("%s.rules: %w", where, err))
			}
			ar.rules = a.Rules.Clone()
		}
		if a.DailyCapUSD > 0 {
			// The engine judges the agent's own cap (its spend against it); the ledger enforces both.
			ar.capMicros = int64(a.DailyCapUSD)
			ar.rules.DailyCapUSD = a.DailyCapUSD
		}
		rs.agents[a.ID] = ar
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	base.decider = decider(base.rules)
	for _, ar := range rs.agents {
		ar.decider = base.decider
		if ar.capMicros > 0 || !sameRules(ar.rules, rs.rules) {
			ar.decider = decider(ar.rules)
		}
	}
	return rs, nil
}

func sameRules(a, b policy.Rules) bool { return reflect.DeepEqual(a, b) }

func parseMode(where, m string, inherit bool) (bool, error) {
	switch m {
	case "":
		return inherit, nil
	case ModeEnforce:
		return false, nil
	case ModeReport:
		return true, nil
	}
	return false, fmt.Errorf("%s: %q is not %s or %s", where, m, ModeEnforce, ModeReport)
}

// Hash is the configuration hash the set was built from.
func (rs *RuleSet) Hash() string { return rs.hash }

// Report says whether the global mode is report, and how many agents are in report mode.
func (rs *RuleSet) Report() (global bool, agents int) {
	for _, a := range rs.agents {
		if a.report {
			agents++
		}
	}
	return rs.report, agents
}

// AgentIDs are the configured agents, sorted.
func (rs *RuleSet) AgentIDs() []string {
	ids := make([]string, 0, len(rs.agents))
	for id := range rs.agents {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// label is id as a metrics label: a configured agent, "default", or "other" (bounded cardinality).
func (rs *RuleSet) label(id string) string {
	if id == DefaultAgent || rs.agents[id] != nil {
		return id
	}
	return OtherAgent
}

// authenticate reads an agent's Proxy-Authorization (Basic agent-id:secret). ok false means the request
// must be refused with 407: credentials that do not match a configured agent (never downgraded to the
// default identity: a wrong secret is an attack or a mistake, not an anonymous agent), or none when
// unauthenticated agents are refused.
func (rs *RuleSet) authenticate(h http.Header) (ar *agentRules, ok bool) {
	v := h.Get("Proxy-Authorization")
	if v == "" {
		return rs.fallback, rs.fallback != nil
	}
	scheme, cred, _ := strings.Cut(v, " ")
	if !strings.EqualFold(scheme, "Basic") {
		return nil, false
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(cred))
	if err != nil {
		return nil, false
	}
	id, secret, found := strings.Cut(string(raw), ":")
	a := rs.agents[id]
	sum := sha256.Sum256([]byte(secret))
	if !found || a == nil || !a.hasSecret {
		// Compare anyway, so that an unknown id costs the same time as a wrong secret.
		subtle.ConstantTimeCompare(sum[:], make([]byte, 32))
		return nil, false
	}
	if subtle.ConstantTimeCompare(sum[:], a.secret[:]) != 1 {
		return nil, false
	}
	return a, true
}

// deciderOf is the engine that decides for ag.
func (p *Proxy) deciderOf(ag *agentRules) Decider {
	if ag == nil || ag.decider == nil {
		return p.opts.Decider
	}
	return ag.decider
}

// agent is the rules of agent id; an id the set no longer knows (a reload removed it while its request was
// in flight) is decided as the default identity, or refused when there is none (nil).
func (rs *RuleSet) agent(id string) *agentRules {
	if a := rs.agents[id]; a != nil {
		return a
	}
	if id == DefaultAgent || id == "" {
		return rs.fallback
	}
	return nil
}

// CheckTightens reports how over is looser than base, if it is. An agent's override may only tighten: the
// global rules are the platform team's floor, and an agent's settings are often delegated to the team
// that runs that agent. Lists are compared as sets; an allowlist may only shrink (an empty one stays empty,
// since adding one can exempt domains from the new-domain hold), a blocklist only grow.
func CheckTightens(base, over policy.Rules) error {
	var errs []error
	looser := func(name string, cond bool) {
		if cond {
			errs = append(errs, fmt.Errorf("%s is looser than the global rule; an agent may only tighten", name))
		}
	}
	looser("max_per_payment_usd", over.MaxPerPaymentUSD > base.MaxPerPaymentUSD)
	looser("hold_above_usd", over.HoldAboveUSD > base.HoldAboveUSD)
	looser("daily_cap_usd", over.DailyCapUSD > base.DailyCapUSD)
	looser("allowed_networks", !subset(over.AllowedNetworks, base.AllowedNetworks))
	looser("usdc_only", base.USDCOnly && !over.USDCOnly)
	looser("strict_allowlist", base.StrictAllowlist && !over.StrictAllowlist)
	looser("new_domain_days", over.NewDomainDays < base.NewDomainDays)
	looser("screen_sanctions", base.ScreenSanctions && !over.ScreenSanctions)
	looser("max_price_multiple", base.MaxPriceMultiple != nil && (over.MaxPriceMultiple == nil || *over.MaxPriceMultiple > *base.MaxPriceMultiple))
	looser("require_live", base.RequireLive && !over.RequireLive)
	looser("hold_on_payto_change", base.HoldOnPayToChange && !over.HoldOnPayToChange)
	looser("domain_allowlist", !subset(over.DomainAllowlist, base.DomainAllowlist))
	looser("payto_allowlist", !subset(over.PayToAllowlist, base.PayToAllowlist))
	looser("domain_blocklist", !subset(base.DomainBlocklist, over.DomainBlocklist))
	looser("payto_blocklist", !subset(base.PayToBlocklist, over.PayToBlocklist))
	return errors.Join(errs...)
}

func subset(a, b []string) bool {
	for _, x := range a {
		if !slices.ContainsFunc(b, func(y string) bool { return strings.EqualFold(x, y) }) {
			return false
		}
	}
	return true
}
