package setup

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every variable README.md's "Point the agent at it" block exports by hand is one payguard env prints for a
// shell: README points at payguard env, so the two must not drift apart.
func TestEnvPrintsWhatREADMEExports(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	shell := map[string]bool{}
	for _, n := range envVars["shell"] {
		shell[n] = true
	}
	n := 0
	for _, l := range strings.Split(string(b), "\n") {
		rest, ok := strings.CutPrefix(strings.TrimSpace(l), "export ")
		if !ok {
			continue
		}
		assigns, _, _ := strings.Cut(rest, "#")
		for _, a := range strings.Fields(assigns) {
			name, _, _ := strings.Cut(a, "=")
			n++
			if !shell[name] {
				t.Errorf("README.md exports %s, payguard env does not print it", name)
			}
		}
	}
	if n < 6 {
		t.Fatalf("found only %d exports in README.md", n)
	}
}
