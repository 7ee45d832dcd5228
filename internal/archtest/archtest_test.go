package archtest

import (
	"os/exec"
	"strings"
	"testing"
)

// TestLayers reads the import graph of every package of the module, test files included (go list), and
// fails on each arrow that runs up a layer.
func TestLayers(t *testing.T) {
	// Two lines per package: the package with its own tests, and its external test package.
	out, err := exec.Command("go", "list", "-e", "-f", "{{.ImportPath}}: {{join .Imports \" \"}} {{join .TestImports \" \"}}\n"+
		"{{.ImportPath}} [external test]: {{join .XTestImports \" \"}}", Module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	graph := parseGraph(string(out))
	if len(graph) < 40 {
		t.Fatalf("go list found %d packages; the module has more", len(graph))
	}
	for _, b := range Check(graph) {
		t.Error(b)
	}
}

// parseGraph reads go list's "pkg: imports..." lines into a graph relative to Module, keeping only the
// module's own packages.
func parseGraph(out string) map[string][]string {
	graph := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		pkg, imports, _ := strings.Cut(line, ": ")
		pkg, external := strings.CutSuffix(pkg, " [external test]")
		rel, ok := relative(pkg)
		if !ok || external && strings.TrimSpace(imports) == "" {
			continue
		}
		if external {
			rel = ExternalTest(rel)
		}
		graph[rel] = nil
		for _, imp := range strings.Fields(imports) {
			if r, ok := relative(imp); ok && r != rel {
				graph[rel] = append(graph[rel], r)
			}
		}
	}
	return graph
}

func relative(pkg string) (string, bool) {
	if pkg == Module {
		return "", false
	}
	return strings.CutPrefix(pkg, Module+"/")
}

// The rules catch what they are for: each bad arrow below is reported, and the graph's legal arrows are not.
func TestCheckFindsArrowsUp(t *testing.T) {
	graph := map[string][]string{
		"policy":              {"config"},          // the rules reading the configuration: up
		"x402":                {"preflight"},       // the wire codec using the engine: up
		"store/bolt":          {"proxy"},           // a store driver using the proxy: up
		"store":               {"server/core"},     // the store interfaces using the server: up
		"proxy":               {"internal/app"},    // a component using the composition: up, and not cmd
		"internal/cli/holds":  {"cmd/payguard"},    // a tool importing the program: up
		"internal/cmd/tool":   {"internal/app"},    // a program other than cmd/payguard using app
		ExternalTest("proxy"): {"internal/app"},    // a test of the proxy starting the whole process
		ExternalTest("store"): {"proxy", "server"}, // an integration test may sit above
		"screening/sanctions": {"x402/svm", "internal/base58", "screening"},
		"server":              {"config", "store", "preflight", "server/core"},
		"cmd/payguard":        {"internal/app", "internal/cli"},
		"newthing":            nil,
	}
	got := strings.Join(Check(graph), "\n")
	for _, want := range []string{
		"policy (layer 1) imports config (layer 2)",
		"x402 (layer 1) imports preflight (layer 4)",
		"store/bolt (layer 2) imports proxy (layer 5)",
		"store (layer 2) imports server/core (layer 5)",
		"proxy (layer 5) imports internal/app (layer 7)",
		"internal/cli/holds (layer 6) imports cmd/payguard (layer 8)",
		"internal/cmd/tool imports internal/app: only cmd/payguard may",
		"newthing: in no layer",
		"proxy [external test] imports internal/app: only cmd/payguard may",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in:\n%s", want, got)
		}
	}
	for _, legal := range []string{"screening/sanctions", "server (", "cmd/payguard", "store [external test]"} {
		if strings.Contains(got, "\n"+legal) || strings.HasPrefix(got, legal) {
			t.Errorf("a legal arrow was reported (%s):\n%s", legal, got)
		}
	}
}
