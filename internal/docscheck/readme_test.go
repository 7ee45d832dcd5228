package docscheck

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func readDoc(t *testing.T, rel string) Doc {
	t.Helper()
	d, err := Read(repoRoot(), rel)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestREADMEFirstScreen: README's first code block is the two set-up commands a fresh machine with Go and
// Node runs: the proxy, and the tests. Nothing else is needed before them.
func TestREADMEFirstScreen(t *testing.T) {
	d := readDoc(t, "README.md")
	var cmds []string
	in := false
	for i, l := range d.Lines {
		if strings.HasPrefix(l, "```") {
			if in {
				break
			}
			in = true
			if i > 40 {
				t.Fatalf("README's first code block starts on line %d: not on the first screen", i+1)
			}
			continue
		}
		if in && strings.TrimSpace(l) != "" {
			cmd, _, _ := strings.Cut(l, "#")
			cmds = append(cmds, strings.TrimSpace(cmd))
		}
	}
	want := []string{"go run ./cmd/payguard proxy", "scripts/test.sh"}
	if strings.Join(cmds, "\n") != strings.Join(want, "\n") {
		t.Errorf("README's first code block is %q, want exactly %q", cmds, want)
	}
}

// exports maps each variable an `export` line of the document sets to "value # comment", normalized.
func exports(d Doc) map[string]string {
	out := map[string]string{}
	for _, l := range d.Lines {
		rest, ok := strings.CutPrefix(strings.TrimSpace(l), "export ")
		if !ok {
			continue
		}
		assigns, comment, _ := strings.Cut(rest, "#")
		for _, a := range strings.Fields(assigns) {
			k, v, ok := strings.Cut(a, "=")
			if ok {
				out[k] = v + " # " + strings.Join(strings.Fields(comment), " ")
			}
		}
	}
	return out
}

// TestAgentShellIsOneText: the example's README gives the agent's shell exactly as README.md does (they
// disagreed on curl: SSL_CERT_FILE against CURL_CA_BUNDLE).
func TestAgentShellIsOneText(t *testing.T) {
	main := exports(readDoc(t, "README.md"))
	example := exports(readDoc(t, "examples/agent-through-proxy/README.md"))
	if len(main) < 6 {
		t.Fatalf("README.md sets only %d variables: %v", len(main), main)
	}
	for k, v := range main {
		if example[k] != v {
			t.Errorf("%s: README.md has %q, examples/agent-through-proxy/README.md has %q", k, v, example[k])
		}
	}
	for k := range example {
		if _, ok := main[k]; !ok {
			t.Errorf("examples/agent-through-proxy/README.md sets %s, README.md does not", k)
		}
	}
}

// TestNodeVersionIsOne: every Node version the READMEs state is the one interop's package.json requires.
func TestNodeVersionIsOne(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repoRoot(), "interop", "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	var pkg struct {
		Engines struct{ Node string } `json:"engines"`
	}
	if err := json.Unmarshal(b, &pkg); err != nil {
		t.Fatal(err)
	}
	want := strings.TrimPrefix(pkg.Engines.Node, ">=")
	if want == "" {
		t.Fatal("interop/package.json states no engines.node")
	}
	mention := regexp.MustCompile(`(?i)\bnode(?:\.js)?(?: >= ?| )(\d+(?:\.\d+)*)`)
	for _, rel := range []string{"README.md", "examples/agent-through-proxy/README.md", "interop/README.md", "clients/js/README.md"} {
		for i, l := range readDoc(t, rel).Lines {
			for _, m := range mention.FindAllStringSubmatch(l, -1) {
				if m[1] != want {
					t.Errorf("%s:%d says Node %s; interop/package.json requires %s", rel, i+1, m[1], pkg.Engines.Node)
				}
			}
		}
	}
}
