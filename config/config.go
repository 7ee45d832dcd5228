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
	Proxy     ProxyConfig     `yaml:"proxy"`
	Admin     AdminConfig     `yaml:"admin"`
	Server    ServerConfig    `yaml:"server"`
	Store     StoreConfig     `yaml:"store"`
	Screening ScreeningConfig `yaml:"screening"`
	Keys      KeysConfig      `yaml:"keys"`
	Log       LogConfig       `yaml:"log"`
	Index     IndexConfig     `yaml:"index"`
	Egress    EgressConfig    `yaml:"egress"`
	// Rules takes SPEC §3's snake_case rule names; omitted rules keep SPEC §3's defaults.
	Rules policy.Rules `yaml:"rules"`
}

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

// Parse decodes YAML over the defaults and validates the result.
func Parse(data []byte) (*Config, error) {
	c := defaults()
	// Unknown keys first, by their path and with a suggestion (explain.go); then the decoder, whose errors
	// are restated with the path of the line they name.
	var doc yaml.Node
	var lines map[int]string
	if err := yaml.Unmarshal(data, &doc); err == nil {
		w := checkKeys(&doc, reflect.TypeFor[Config]())
		if len(w.unknown) > 0 {
			return nil, errors.New(strings.Join(w.unknown, "\n"))
		}
		lines = w.lines
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(c); err != nil && !errors.Is(err, io.EOF) {
		return nil, explain(err, lines)
	}
	// A second document (after ---) would be ignored, unknown keys and settings alike: refuse it.
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		if err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("config: more than one YAML document (a second one starts at line %d); put everything in one", extra.Line)
	}
	c.applyDataDir()
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return c, nil
}

// defaults is the zero-config starting point every file is decoded over.
func defaults() *Config {
	return &Config{
		Proxy:     defaultProxy(),
		Admin:     defaultAdmin(),
		Server:    defaultServer(),
		Store:     defaultStore(),
		Screening: defaultScreening(),
		Keys:      defaultKeys(),
		Log:       defaultLog(),
		Index:     defaultIndex(),
		Rules:     policy.DefaultRules(),
	}
}

// Validate checks every section.
func (c *Config) Validate() error {
	for _, v := range []interface{ validate() error }{&c.Proxy, &c.Admin, &c.Server, &c.Store, &c.Screening, &c.Keys, &c.Log, &c.Index, &c.Egress} {
		if err := v.validate(); err != nil {
			return err
		}
	}
	return c.Rules.Validate()
}
