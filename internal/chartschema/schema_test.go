package chartschema

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/payguard/payguard/config"
	"github.com/payguard/payguard/policy"
)

const root = "../.."

// The committed schema is what the types say today. When this fails, run `go run ./internal/cmd/genschema`.
func TestCommittedSchemaMatchesTheTypes(t *testing.T) {
	want, err := Generate(root)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(root, SchemaPath))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s is out of date with the config types: run `go run ./internal/cmd/genschema` and commit the result", SchemaPath)
	}
}

func load(t *testing.T) Schema {
	t.Helper()
	b, err := Generate(root)
	if err != nil {
		t.Fatal(err)
	}
	var s Schema
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

func at(t *testing.T, s Schema, path ...string) Schema {
	t.Helper()
	for _, p := range path {
		props, _ := s["properties"].(map[string]any)
		next, ok := props[p].(map[string]any)
		if !ok {
			t.Fatalf("schema has no %s", strings.Join(path, "."))
		}
		s = next
	}
	return s
}

// Every rule policy.Rules decodes is in the schema with its type and a description, and nothing else is:
// a rule added to the Go type shows up here without anyone editing the chart's schema by hand.
func TestRulesAreTheGoType(t *testing.T) {
	rules := at(t, load(t), "rules")
	if rules["additionalProperties"] != false {
		t.Fatal("rules accepts unknown names")
	}
	props := rules["properties"].(map[string]any)
	rt := reflect.TypeFor[policy.Rules]()
	if len(props) != rt.NumField() {
		t.Fatalf("schema has %d rules, policy.Rules has %d fields", len(props), rt.NumField())
	}
	for i := range rt.NumField() {
		name, _, _ := strings.Cut(rt.Field(i).Tag.Get("yaml"), ",")
		p, ok := props[name].(map[string]any)
		if !ok || p["description"] == "" || p["description"] == nil {
			t.Errorf("rule %s: missing or undescribed in the schema (%v)", name, props[name])
		}
	}
	if types := at(t, rules, "max_price_multiple")["type"].([]any); types[len(types)-1] != "null" {
		t.Error("max_price_multiple must accept null (it disables the rule)")
	}
	if at(t, rules, "domain_blocklist")["maxItems"] != float64(policy.MaxListEntries) {
		t.Error("rule lists are not capped at SPEC's 100 entries")
	}
}

// A chart value that becomes a payguard.yaml key carries the config field's own doc comment, and a mapping
// to a key that does not exist is a generation error (the drift a hand-written schema would hide).
func TestChartValuesTakeTheConfigFieldsDescription(t *testing.T) {
	d := at(t, load(t), "proxy", "holdWait")["description"].(string)
	if !strings.HasPrefix(d, "HoldWait is how long a held 402 waits") || !strings.HasSuffix(d, "(payguard.yaml: proxy.hold_wait)") {
		t.Fatalf("proxy.holdWait description %q", d)
	}
	g := &generator{docs: fieldDocs{}}
	if err := g.docs.parseDir(filepath.Join(root, "config")); err != nil {
		t.Fatal(err)
	}
	g.configKey("proxy.hold_wiat")
	if g.err == nil || !strings.Contains(g.err.Error(), "proxy.hold_wiat") {
		t.Fatalf("a mapping to a missing key: err %v", g.err)
	}
	// serve.server is config.ServerConfig, minus the two listen addresses the chart sets itself.
	server := at(t, load(t), "serve", "server")["properties"].(map[string]any)
	st := reflect.TypeFor[config.ServerConfig]()
	if len(server) != st.NumField()-2 || server["listen"] != nil || server["fees"] == nil {
		t.Fatalf("serve.server has %d keys (ServerConfig %d fields): %v", len(server), st.NumField(), server)
	}
}
