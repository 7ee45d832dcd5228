package docscheck

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
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

// TestNodeVersionIsOne: every Node version a README states is what the packages it speaks for require (their
// package.json engines.node; the highest when a README speaks for several, as README.md's test command runs
// both interop and clients/js).
func TestNodeVersionIsOne(t *testing.T) {
	engines := func(pkg string) string {
		b, err := os.ReadFile(filepath.Join(repoRoot(), pkg, "package.json"))
		if err != nil {
			t.Fatal(err)
		}
		var p struct {
			Engines struct{ Node string } `json:"engines"`
		}
		if err := json.Unmarshal(b, &p); err != nil {
			t.Fatal(err)
		}
		v := strings.TrimPrefix(p.Engines.Node, ">=")
		if v == "" {
			t.Fatalf("%s/package.json states no engines.node", pkg)
		}
		return v
	}
	mention := regexp.MustCompile(`(?i)\bnode(?:\.js)?(?: >= ?| )(\d+(?:\.\d+)*)`)
	for rel, pkgs := range map[string][]string{
		"README.md": {"interop", "clients/js"}, "examples/agent-through-proxy/README.md": {"interop"},
		"interop/README.md": {"interop"}, "clients/js/README.md": {"clients/js"},
	} {
		want := ""
		for _, p := range pkgs {
			if v := engines(p); want == "" || versionLess(want, v) {
				want = v
			}
		}
		for i, l := range readDoc(t, rel).Lines {
			for _, m := range mention.FindAllStringSubmatch(l, -1) {
				if !sameVersion(m[1], want) {
					t.Errorf("%s:%d says Node %s; %s require Node %s or later (package.json engines)", rel, i+1, m[1], strings.Join(pkgs, " and "), want)
				}
			}
		}
	}
}

// versionParts is a dotted version as numbers, padded to three.
func versionParts(v string) [3]int {
	var out [3]int
	for i, p := range strings.SplitN(v, ".", 3) {
		n, _ := strconv.Atoi(p)
		out[i] = n
	}
	return out
}

func versionLess(a, b string) bool {
	pa, pb := versionParts(a), versionParts(b)
	for i := range pa {
		if pa[i] != pb[i] {
			return pa[i] < pb[i]
		}
	}
	return false
}

func sameVersion(a, b string) bool { return versionParts(a) == versionParts(b) }
