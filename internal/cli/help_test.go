package cli

import (
	"bytes"
	"strings"
	"testing"
)

// TestEveryHelpDocHasOneShape: every help text kept here, subcommands included (cmd/payguard's
// TestEveryHelpHasOneShape runs each registered command's -h), opens with a sentence, lists call forms of
// its own command under Usage:, has a Flags: section and an example that starts with payguard.
func TestEveryHelpDocHasOneShape(t *testing.T) {
	for name := range helpDocs {
		var out bytes.Buffer
		WriteHelp(&out, name, nil)
		lines := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
		first, _, _ := strings.Cut(name, " ")
		if len(lines) < 7 || !strings.HasSuffix(lines[0], ".") || lines[1] != "" || lines[2] != "Usage:" ||
			!strings.HasPrefix(lines[3], "  payguard "+first) {
			t.Errorf("%s: help does not open with a sentence and its call forms:\n%s", name, out.String())
			continue
		}
		f, e := strings.Index(out.String(), "\nFlags:"), strings.Index(out.String(), "\nExample:\n  payguard ")
		if f < 0 || e < f {
			t.Errorf("%s: no Flags: section followed by a payguard example:\n%s", name, out.String())
		}
	}
}
