// Package config reads payguard's YAML configuration. Unknown keys are errors (yaml KnownFields), secrets can
// come from files or the environment, and an embedded default makes `payguard proxy` work with no file.
//
// Each section's type lives in its own file, next to the code that owns it:
// proxy.go (proxy and admin listeners), server.go (serve mode), store.go, screening.go, keys.go.
package config

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/payguard/payguard/policy"
)

// Config is the whole file.
type Config struct {
	// DataDir holds all the state a payguard process (proxy or serve) creates: the MITM CA, the receipt keys,
	// the bolt ledger, the sanctions cache, the generated admin and decide tokens, and the lock that keeps a
	// second process out (one process per data dir). Moving it (here, --data-dir or PAYGUARD_DATA_DIR;
	// datadir.go) moves each of those whose own key was left at its place under the data dir; a key set to
	// somewhere else stays there. proxy.data_dir is its old name, still read (datadir.go).
	DataDir   string          `yaml:"data_dir"`
	Proxy     ProxyConfig     `yaml:"proxy"`
	Admin     AdminConfig     `yaml:"admin"`
	Server    ServerConfig    `yaml:"server"`
	Store     StoreConfig     `yaml:"store"`
	Screening ScreeningConfig `yaml:"screening"`
	Keys      KeysConfig      `yaml:"keys"`
	Log       LogConfig       `yaml:"log"`
	Index     IndexConfig     `yaml:"index"`
	Egress    EgressConfig    `yaml:"egress"`
	Agents    AgentsConfig    `yaml:"agents"`  // agents.go: who the agents are, their caps and rules
	Journal   JournalConfig   `yaml:"journal"` // agents.go: the decision journal
	// Rules takes SPEC §3's snake_case rule names; omitted rules keep SPEC §3's defaults.
	Rules policy.Rules `yaml:"rules"`

	deprecated []string // old spellings the file used, read as their new ones (Deprecations)
}

// Deprecations are the old spellings the file used, each with what to write instead: they still work, and
// `payguard config validate` and the start log say so, so that the file can be moved on before they stop.
func (c *Config) Deprecations() []string { return c.deprecated }

//go:embed default.yaml
var defaultYAML []byte

// DefaultYAML is the embedded default configuration, as text.
func DefaultYAML() []byte { return bytes.Clone(defaultYAML) }

// Default returns the embedded default configuration.
func Default() (*Config, error) { return Parse(defaultYAML) }

// Load reads and validates a file; an empty path means the embedded default.
func Load(path string) (*Config, error) {
	if path == "" {
		return Default()
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	c, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	return c, nil
}

// Parse decodes YAML over the defaults and validates the result. It reports every problem it finds, not only
// the first (errors.Join): unknown keys, values of the wrong kind and values out of bounds together, so one
// run of `payguard config validate` lists all there is to fix.
func Parse(data []byte) (*Config, error) {
	c := defaults()
	var errs []error
	c.DataDir = "" // set below from data_dir, its old name proxy.data_dir, or the default (datadir.go)
	// Unknown keys first, by their path and with a suggestion (explain.go); then the decoder, whose errors
	// are restated with the path of the line they name.
	var doc yaml.Node
	var lines map[int]string
	unknown := false
	if err := yaml.Unmarshal(data, &doc); err == nil {
		w := checkKeys(&doc, reflect.TypeFor[Config]())
		if len(w.unknown) > 0 {
			errs = append(errs, errors.New(strings.Join(w.unknown, "\n")))
			unknown = true
		}
		lines = w.lines
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	// The unknown keys are reported already; decoding the rest still finds the values of the wrong kind.
	dec.KnownFields(!unknown)
	if err := dec.Decode(c); err != nil && !errors.Is(err, io.EOF) {
		errs = append(errs, explain(err, lines))
		var te *yaml.TypeError
		if !errors.As(err, &te) {
			return nil, errors.Join(errs...) // a syntax error: nothing more can be read
		}
	}
	// A second document (after ---) would be ignored, unknown keys and settings alike: refuse it.
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		if err != nil {
			return nil, errors.Join(append(errs, err)...)
		}
		return nil, errors.Join(append(errs, fmt.Errorf("config: more than one YAML document (a second one starts at line %d); put everything in one", extra.Line))...)
	}
	if err := c.applyDataDir(); err != nil {
		errs = append(errs, err)
	}
	if err := c.Validate(); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return c, nil
}

// defaults is the zero-config starting point every file is decoded over.
func defaults() *Config {
	return &Config{
		DataDir:   DefaultDataDir,
		Proxy:     defaultProxy(),
		Admin:     defaultAdmin(),
		Server:    defaultServer(),
		Store:     defaultStore(),
		Screening: defaultScreening(),
		Keys:      defaultKeys(),
		Log:       defaultLog(),
		Index:     defaultIndex(),
		Agents:    defaultAgents(),
		Journal:   defaultJournal(),
		Rules:     policy.DefaultRules(),
	}
}

// Validate checks every section and reports every problem (errors.Join), not only the first.
func (c *Config) Validate() error {
	var errs []error
	if c.DataDir == "" {
		errs = append(errs, errors.New("data_dir must not be empty"))
	}
	for _, v := range []interface{ validate() error }{&c.Proxy, &c.Admin, &c.Server, &c.Store, &c.Screening, &c.Keys, &c.Log, &c.Index, &c.Egress, &c.Agents, &c.Journal} {
		errs = append(errs, v.validate())
	}
	errs = append(errs, c.Rules.Validate())
	return errors.Join(errs...)
}
