package archtest

import (
	"fmt"
	"sort"
	"strings"
)

// Module is the module path the layers are stated under.
const Module = "github.com/payguard/payguard"

// layers maps a package (relative to Module) to its layer by the longest matching prefix.
var layers = []struct {
	prefix string
	layer  int
}{
	{"internal/evmaddr", 0}, {"internal/base58", 0}, {"internal/buildinfo", 0}, {"internal/shell", 0},
	{"internal/egress", 0}, {"internal/logbuf", 0}, {"internal/logout", 0}, {"internal/errbody", 0}, {"internal/inputerr", 0}, {"internal/timefmt", 0}, {"internal/plainurl", 0}, {"internal/plainurl/plainurltest", 0}, {"internal/readlimit", 0}, {"internal/slotmemo", 0}, {"internal/testutil", 0}, {"internal/testredis", 0},
	{"internal/testreport", 0}, {"internal/docscheck", 0}, {"internal/realdata", 0}, {"internal/benchcpu", 0},
	{"x402/jsonscan", 0}, {"x402/svm", 0},
	{"x402", 1}, {"policy", 1},
	{"config", 2}, {"store", 2}, {"receipts", 2},
	{"screening", 3}, {"index", 3}, {"internal/apitoken", 3}, {"internal/chartschema", 3},
	{"preflight", 4},
	{"proxy", 5}, {"server", 5},
	{"internal/cli", 6},
	{"internal/app", 7},
	{"cmd", 8}, {"internal/cmd", 8}, {"internal/testredis/cmd", 8}, {"internal/archtest", 8},
}

// ExternalTest names the external test package of rel in a graph.
func ExternalTest(rel string) string { return rel + " [external test]" }

// Layer is a package's layer (rel is relative to Module); ok is false for a package no prefix covers. An
// external test package is in the top layer.
func Layer(rel string) (layer int, ok bool) {
	if strings.HasSuffix(rel, " [external test]") {
		return 8, true
	}
	best := -1
	for _, l := range layers {
		if (rel == l.prefix || strings.HasPrefix(rel, l.prefix+"/")) && len(l.prefix) > best {
			best, layer, ok = len(l.prefix), l.layer, true
		}
	}
	return layer, ok
}

// Check returns every arrow of graph (package → its imports, both relative to Module; other modules'
// packages left out) that breaks the rules above, sorted, and every package no layer covers.
func Check(graph map[string][]string) []string {
	var bad []string
	for pkg, imports := range graph {
		from, ok := Layer(pkg)
		if !ok {
			bad = append(bad, fmt.Sprintf("%s: in no layer (add it to internal/archtest's layers)", pkg))
			continue
		}
		for _, imp := range imports {
			to, ok := Layer(imp)
			switch {
			case !ok:
				bad = append(bad, fmt.Sprintf("%s imports %s, which is in no layer", pkg, imp))
			case to > from:
				bad = append(bad, fmt.Sprintf("%s (layer %d) imports %s (layer %d): an arrow up", pkg, from, imp, to))
			case imp == "internal/app" && pkg != "cmd/payguard" && pkg != ExternalTest("cmd/payguard"):
				bad = append(bad, fmt.Sprintf("%s imports internal/app: only cmd/payguard may", pkg))
			case strings.HasPrefix(imp, "cmd/") || strings.HasPrefix(imp, "internal/cmd/"):
				bad = append(bad, fmt.Sprintf("%s imports the program %s", pkg, imp))
			}
		}
	}
	sort.Strings(bad)
	return bad
}
