package config

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/payguard/payguard/policy"
)

// AgentsConfig is the `agents:` section: who the agents behind one proxy are, each with its own secret,
// daily cap and optional rules (which may only tighten the global ones). It reloads with the rules
// (SIGHUP, POST /v1/reload).
type AgentsConfig struct {
	// Mode is enforce, or report (shadow mode: every decision is made, signed, logged and counted, and a
	// block or hold is logged as would_block / would_hold and not enforced). It applies to every agent
	// without a mode of its own, the default identity included.
	Mode string `yaml:"mode"`
	// Unauthenticated is what a request without agent credentials is: "default" (decided as the agent
	// "default" under the global rules) or "refuse" (407). Wrong credentials are always refused.
	Unauthenticated string `yaml:"unauthenticated"`
	// List are the agents. Each authenticates with Proxy-Authorization: Basic <id:secret>.
	List []AgentEntry `yaml:"list"`
}

// AgentEntry is one agent. Its secret is given exactly one way: secret_sha256 (the hex SHA-256 of the
// secret, as `payguard agents add` prints it: the file then holds no secret), secret_file or secret_env.
type AgentEntry struct {
	ID           string `yaml:"id"`
	SecretSHA256 string `yaml:"secret_sha256"`
	SecretFile   string `yaml:"secret_file"`
	SecretEnv    string `yaml:"secret_env"`
	// Mode is enforce or report (shadow: decided and logged, never refused); "" is the global mode.
	Mode string `yaml:"mode"`
	// DailyCapUSD is the agent's own daily cap (0: none; the global daily_cap_usd still binds the sum).
	DailyCapUSD policy.USD `yaml:"daily_cap_usd"`
	// Rules are SPEC §3's rules for this agent, over the global ones; each may only tighten.
	Rules map[string]any `yaml:"rules"`
}

func defaultAgents() AgentsConfig {
	return AgentsConfig{Mode: "enforce", Unauthenticated: "default", List: []AgentEntry{}}
}

func (a *AgentsConfig) validate() error {
	var errs []error
	switch a.Mode {
	case "enforce", "report":
	default:
		errs = append(errs, fmt.Errorf("agents.mode: %q is not enforce or report", a.Mode))
	}
	switch a.Unauthenticated {
	case "default", "refuse":
	default:
		errs = append(errs, fmt.Errorf("agents.unauthenticated: %q is not default or refuse", a.Unauthenticated))
	}
	for i, e := range a.List {
		n := 0
		for _, s := range []string{e.SecretSHA256, e.SecretFile, e.SecretEnv} {
			if s != "" {
				n++
			}
		}
		if n != 1 {
			errs = append(errs, fmt.Errorf("agents.list[%d] (%s): set exactly one of secret_sha256, secret_file, secret_env", i, e.ID))
		}
		if e.SecretSHA256 != "" {
			if b, err := hex.DecodeString(e.SecretSHA256); err != nil || len(b) != 32 {
				errs = append(errs, fmt.Errorf("agents.list[%d] (%s): secret_sha256 must be 64 hex digits", i, e.ID))
			}
		}
		if e.Mode != "" && e.Mode != "enforce" && e.Mode != "report" {
			errs = append(errs, fmt.Errorf("agents.list[%d] (%s): mode %q is not enforce or report", i, e.ID, e.Mode))
		}
		if e.DailyCapUSD < 0 {
			errs = append(errs, fmt.Errorf("agents.list[%d] (%s): daily_cap_usd must not be negative", i, e.ID))
		}
	}
	return errors.Join(errs...)
}

// Agent is an agent entry resolved: its secret read and hashed, its rules decoded over the global ones.
type Agent struct {
	ID           string
	SecretSHA256 [32]byte
	DailyCapUSD  policy.USD
	Rules        *policy.Rules // nil: the global rules
	Mode         string
}

// ResolveAgents reads each agent's secret (file or environment) and decodes its rules over global. Errors
// name the agent and where its secret came from, never the secret.
func (c *Config) ResolveAgents() ([]Agent, error) {
	var out []Agent
	var errs []error
	for i, e := range c.Agents.List {
		a := Agent{ID: e.ID, DailyCapUSD: e.DailyCapUSD, Mode: e.Mode}
		if e.SecretSHA256 != "" {
			b, _ := hex.DecodeString(e.SecretSHA256)
			copy(a.SecretSHA256[:], b)
		} else {
			s, err := fromFileOrEnv("agent "+e.ID+" secret", e.SecretFile, e.SecretEnv)
			if err != nil {
				errs = append(errs, fmt.Errorf("agents.list[%d]: %w", i, err))
				continue
			}
			a.SecretSHA256 = sha256.Sum256([]byte(s))
		}
		if e.Rules != nil {
			raw, err := json.Marshal(e.Rules)
			if err == nil {
				var r policy.Rules
				if r, err = policy.DecodeRulesJSON(raw, c.Rules); err == nil {
					a.Rules = &r
				}
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("agents.list[%d] (%s).rules: %w", i, e.ID, err))
				continue
			}
		}
		out = append(out, a)
	}
	return out, errors.Join(errs...)
}

// RuleSetHash is the hex SHA-256 of what a reload can change: the rules, the agents (their ids, secret
// hashes, caps and rules) and the unauthenticated setting. Receipts and metrics name the active one.
func RuleSetHash(rules policy.Rules, agents []Agent, unauthenticated, mode string) string {
	type agentView struct {
		Mode   string        `json:"mode"`
		ID     string        `json:"id"`
		Secret string        `json:"secret_sha256"`
		Cap    policy.USD    `json:"daily_cap_usd"`
		Rules  *policy.Rules `json:"rules"`
	}
	view := struct {
		Rules           policy.Rules `json:"rules"`
		Agents          []agentView  `json:"agents"`
		Unauthenticated string       `json:"unauthenticated"`
		Mode            string       `json:"mode"`
	}{Mode: mode, Rules: rules, Unauthenticated: strings.ToLower(unauthenticated), Agents: []agentView{}}
	for _, a := range agents {
		view.Agents = append(view.Agents, agentView{a.Mode, a.ID, hex.EncodeToString(a.SecretSHA256[:]), a.DailyCapUSD, a.Rules})
	}
	b, _ := json.Marshal(view)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// JournalConfig is the `journal:` section: the append-only decision journal (JSON lines, each decision
// with its input and signed receipt), rotated at max_bytes, keeping max_files old files.
type JournalConfig struct {
	Path     string `yaml:"path"` // "" = off
	MaxBytes int64  `yaml:"max_bytes"`
	MaxFiles int    `yaml:"max_files"`
}

func defaultJournal() JournalConfig { return JournalConfig{MaxBytes: 64 << 20, MaxFiles: 5} }

func (j *JournalConfig) validate() error {
	if j.MaxBytes < 4096 {
		return fmt.Errorf("journal.max_bytes must be at least 4096, got %d", j.MaxBytes)
	}
	if j.MaxFiles < 1 || j.MaxFiles > 1000 {
		return fmt.Errorf("journal.max_files must be between 1 and 1000, got %d", j.MaxFiles)
	}
	return nil
}
