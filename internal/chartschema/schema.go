// Package chartschema generates the Helm chart's values.schema.json from payguard's configuration types, so
// that `helm install --set rules.max_per_paymnt_usd=2` is refused by Helm instead of rendering a pod that
// crash-loops on the binary's unknown-key error. One source of truth: every value the chart copies into
// payguard.yaml takes its JSON type and its description from the config field it becomes (the Go type and
// the field's doc comment), the `rules` block is policy.Rules itself, and `serve.server` is
// config.ServerConfig. Only the chart's own knobs (image, ports, Kubernetes objects) are described here.
//
// Regenerate with `go run ./internal/cmd/genschema` (or `go generate ./internal/chartschema`); the test in
// this package fails when the committed schema differs from what the types say.
package chartschema

//go:generate go run ../cmd/genschema -root ../..

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"strings"

	"github.com/payguard/payguard/config"
	"github.com/payguard/payguard/policy"
)

// SchemaPath is where the schema lives, relative to the repository root.
const SchemaPath = "charts/payguard/values.schema.json"

// Schema is one JSON Schema (draft-07) node. Keys are sorted when marshalled, so the output is stable.
type Schema map[string]any

// Generate returns the schema text. root is the repository root: the doc comments of the config and policy
// types are read from their source files there.
func Generate(root string) ([]byte, error) {
	docs := fieldDocs{}
	for _, dir := range []string{"config", "policy"} {
		if err := docs.parseDir(filepath.Join(root, dir)); err != nil {
			return nil, err
		}
	}
	g := &generator{docs: docs}
	s := g.chart()
	if g.err != nil {
		return nil, g.err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// fieldDocs maps "TypeName.FieldName" to the field's doc comment, as one line.
type fieldDocs map[string]string

func (d fieldDocs) parseDir(dir string) error {
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return err
	}
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		ast.Inspect(file, func(n ast.Node) bool {
			ts, ok := n.(*ast.TypeSpec)
			if !ok {
				return true
			}
			st, ok := ts.Type.(*ast.StructType)
			if !ok {
				return false
			}
			for _, field := range st.Fields.List {
				text := field.Doc.Text()
				if text == "" {
					text = field.Comment.Text()
				}
				for _, name := range field.Names {
					d[ts.Name.Name+"."+name.Name] = oneLine(text)
				}
			}
			return false
		})
	}
	return nil
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

type generator struct {
	docs fieldDocs
	err  error
}

var (
	usdType      = reflect.TypeFor[policy.USD]()
	durationType = reflect.TypeFor[config.Duration]()
)

// durationPattern is what time.ParseDuration accepts (without a sign: no setting takes a negative time).
const durationPattern = `^([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|ms|s|m|h)(([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|ms|s|m|h))*$|^0$`

// decimalPattern is a non-negative decimal number as text (what --set passes for 0.25).
const decimalPattern = `^(0|[1-9][0-9]*)(\.[0-9]+)?$`

// ofType is the schema of a Go type as payguard's YAML decoder reads it.
func (g *generator) ofType(t reflect.Type) Schema {
	switch t {
	case usdType:
		// A YAML number read exactly (policy.USD). `helm --set rules.daily_cap_usd=0.5` passes the text as a
		// string, so a decimal string is accepted too and the chart writes it into payguard.yaml unquoted.
		return Schema{"type": []any{"number", "string"}, "minimum": 0, "pattern": decimalPattern}
	case durationType:
		return Schema{"type": "string", "pattern": durationPattern}
	}
	switch t.Kind() {
	case reflect.Pointer:
		s := g.ofType(t.Elem())
		switch typ := s["type"].(type) {
		case []any:
			s["type"] = append(typ, "null")
		default:
			s["type"] = []any{typ, "null"}
		}
		return s
	case reflect.Bool:
		return Schema{"type": "boolean"}
	case reflect.String:
		return Schema{"type": "string"}
	case reflect.Int, reflect.Int32, reflect.Int64:
		return Schema{"type": "integer"}
	case reflect.Float32, reflect.Float64:
		return Schema{"type": []any{"number", "string"}, "minimum": 0, "pattern": decimalPattern}
	case reflect.Slice:
		return Schema{"type": "array", "items": g.ofType(t.Elem())}
	case reflect.Struct:
		props := Schema{}
		for i := range t.NumField() {
			f := t.Field(i)
			name := yamlName(f)
			if name == "" {
				continue
			}
			fs := g.ofType(f.Type)
			if doc := g.docs[t.Name()+"."+f.Name]; doc != "" {
				fs["description"] = doc
			}
			props[name] = fs
		}
		return Schema{"type": "object", "additionalProperties": false, "properties": props}
	}
	g.fail(fmt.Errorf("chartschema: no schema for Go type %s", t))
	return Schema{}
}

func yamlName(f reflect.StructField) string {
	if !f.IsExported() {
		return ""
	}
	name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
	if name == "-" {
		return ""
	}
	if name == "" {
		return strings.ToLower(f.Name)
	}
	return name
}

func (g *generator) fail(err error) {
	if g.err == nil {
		g.err = err
	}
}

// configKey is the schema of one key of payguard.yaml ("proxy.hold_wait"), with the config field's
// description. A key that no longer exists is an error: the chart would render a file the binary refuses.
func (g *generator) configKey(path string) Schema {
	t := reflect.TypeFor[config.Config]()
	var owner reflect.Type
	var field reflect.StructField
	for _, part := range strings.Split(path, ".") {
		found := false
		for i := range t.NumField() {
			if yamlName(t.Field(i)) == part {
				owner, field, found = t, t.Field(i), true
				break
			}
		}
		if !found {
			g.fail(fmt.Errorf("chartschema: payguard.yaml has no key %s (the chart maps a value to it)", path))
			return Schema{}
		}
		t = field.Type
	}
	s := g.ofType(t)
	doc := g.docs[owner.Name()+"."+field.Name]
	if doc == "" && t.Kind() != reflect.Struct {
		g.fail(fmt.Errorf("chartschema: config field %s.%s (%s) has no doc comment to describe the chart value", owner.Name(), field.Name, path))
	}
	s["description"] = strings.TrimSpace(doc + " (payguard.yaml: " + path + ")")
	return s
}

// Helpers for the chart's own values.

func obj(desc string, props Schema) Schema {
	return Schema{"type": "object", "description": desc, "additionalProperties": false, "properties": props}
}

func openObj(desc string) Schema { return Schema{"type": "object", "description": desc} }

func str(desc string) Schema { return Schema{"type": "string", "description": desc} }

func boolean(desc string) Schema { return Schema{"type": "boolean", "description": desc} }

func integer(desc string, min int) Schema {
	return Schema{"type": "integer", "description": desc, "minimum": min}
}

func port(desc string) Schema {
	return Schema{"type": "integer", "description": desc, "minimum": 1, "maximum": 65535}
}

func enum(desc string, values ...any) Schema { return Schema{"description": desc, "enum": values} }

func list(desc string, items Schema) Schema {
	return Schema{"type": "array", "description": desc, "items": items}
}

func with(s Schema, key string, v any) Schema {
	s[key] = v
	return s
}

// Write regenerates the schema file under root.
func Write(root string) error {
	b, err := Generate(root)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(root, SchemaPath), b, 0o644)
}

func typeOfRules() reflect.Type { return reflect.TypeFor[policy.Rules]() }
