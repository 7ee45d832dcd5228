package config

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Configuration errors name the YAML key path a person wrote (proxy.hold_wait), never a Go type: unknown keys
// are found by walking the document against the Config type before decoding, with the closest known key as a
// suggestion, and the decoder's own errors ("line 7: cannot unmarshal !!str `x` into int") are restated with
// the path of the value on that line and what the key wants.

var (
	nodeUnmarshaler = reflect.TypeFor[yaml.Unmarshaler]()
	oldUnmarshaler  = reflect.TypeFor[yaml.Unmarshaler]() // replaced in init: the obsolete func(any) error form
)

func init() {
	type obsolete interface {
		UnmarshalYAML(unmarshal func(any) error) error
	}
	oldUnmarshaler = reflect.TypeFor[obsolete]()
}

// keyWalk is one pass over a document: the unknown keys it found and the key path of each line's value.
type keyWalk struct {
	unknown []string
	lines   map[int]string
}

// checkKeys walks doc (a parsed document) against t (the Config type).
func checkKeys(doc *yaml.Node, t reflect.Type) keyWalk {
	w := keyWalk{lines: map[int]string{}}
	if doc.Kind == yaml.DocumentNode && len(doc.Content) == 1 {
		w.walk(doc.Content[0], t, "")
	}
	return w
}

func (w *keyWalk) walk(n *yaml.Node, t reflect.Type, path string) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if path != "" {
		if _, seen := w.lines[n.Line]; !seen {
			w.lines[n.Line] = path
		}
	}
	if reflect.PointerTo(t).Implements(nodeUnmarshaler) || reflect.PointerTo(t).Implements(oldUnmarshaler) {
		return // the type reads its own value (a duration, an amount)
	}
	switch {
	case t.Kind() == reflect.Struct && n.Kind == yaml.MappingNode:
		fields := yamlFields(t)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			child := join(path, k.Value)
			ft, ok := fields[k.Value]
			if !ok {
				w.unknown = append(w.unknown, unknownKey(child, k, fields))
				continue
			}
			w.lines[k.Line] = child
			w.walk(v, ft, child)
		}
	case t.Kind() == reflect.Map && n.Kind == yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			w.walk(n.Content[i+1], t.Elem(), join(path, n.Content[i].Value))
		}
	case t.Kind() == reflect.Slice && n.Kind == yaml.SequenceNode:
		for i, v := range n.Content {
			w.walk(v, t.Elem(), path+"["+strconv.Itoa(i)+"]")
		}
	}
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// yamlFields maps a struct's YAML keys to their types.
func yamlFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "-" {
			continue
		}
		if strings.Contains(opts, "inline") {
			for k, v := range yamlFields(f.Type) {
				out[k] = v
			}
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		out[name] = f.Type
	}
	return out
}

// unknownKey says that path is not a key, with the closest known one when one is close.
func unknownKey(path string, k *yaml.Node, fields map[string]reflect.Type) string {
	msg := fmt.Sprintf("%s: unknown key (line %d)", path, k.Line)
	if s := closest(k.Value, fields); s != "" {
		msg += "; did you mean " + s + "?"
	} else {
		known := make([]string, 0, len(fields))
		for name := range fields {
			known = append(known, name)
		}
		sort.Strings(known)
		msg += "; known keys here: " + strings.Join(known, ", ")
	}
	return msg
}

// closest is the known key nearest to key in edit distance, if it is near enough to be a typo.
func closest(key string, fields map[string]reflect.Type) string {
	best, bestD := "", len(key)/3+2
	names := make([]string, 0, len(fields))
	for name := range fields {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if d := editDistance(strings.ToLower(key), name); d < bestD {
			best, bestD = name, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance (adjacent transpositions count once).
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev2, prev, cur := make([]int, len(rb)+1), make([]int, len(rb)+1), make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}

var (
	lineRE      = regexp.MustCompile(`line (\d+): `)
	unmarshalRE = regexp.MustCompile("cannot unmarshal !!(\\w+) `([^`]*)` into (\\S+)")
)

// explain restates a decoding error with the key paths of the lines it names and what those keys want.
func explain(err error, lines map[int]string) error {
	var te *yaml.TypeError
	msgs := []string{err.Error()}
	if errors.As(err, &te) {
		msgs = te.Errors
	}
	out := make([]string, 0, len(msgs))
	for _, m := range msgs {
		m = unmarshalRE.ReplaceAllStringFunc(m, func(s string) string {
			p := unmarshalRE.FindStringSubmatch(s)
			return fmt.Sprintf("%q is not %s", p[2], wants(p[3]))
		})
		m = lineRE.ReplaceAllStringFunc(m, func(s string) string {
			n, _ := strconv.Atoi(lineRE.FindStringSubmatch(s)[1])
			if path, ok := lines[n]; ok {
				return fmt.Sprintf("%s (line %d): ", path, n)
			}
			return s
		})
		out = append(out, strings.TrimPrefix(m, "yaml: "))
	}
	return errors.New(strings.Join(out, "\n"))
}

// wants says in words what a Go type the decoder named takes.
func wants(goType string) string {
	switch {
	case strings.HasPrefix(goType, "[]"):
		return "a list"
	case strings.HasPrefix(goType, "map["):
		return "a mapping of keys to values"
	case strings.HasPrefix(goType, "int"), strings.HasPrefix(goType, "uint"):
		return "a whole number"
	case strings.HasPrefix(goType, "float"):
		return "a number"
	case goType == "bool":
		return "true or false"
	case goType == "string":
		return "a single text value"
	case goType == "config.Duration":
		return "a duration such as 30s or 15m"
	case strings.HasPrefix(goType, "config.") || strings.HasPrefix(goType, "policy."):
		return "a mapping of keys to values (a section)"
	}
	return "the right kind of value"
}
