package main

import (
	"bytes"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// subcommands names, for every command that dispatches on a second word, the words it knows; asking one of
// them for help must succeed as well.
var subcommands = map[string][]string{
	"agents": {"add"},
	"ca":     {"init"},
	"config": {"default", "validate"},
	"holds":  {"list", "show", "approve", "deny"},
	"keys":   {"generate", "rotate", "jwks"},
	"rules":  {"default", "validate"},
	"sdn":    {"update", "stats"},
	"store":  {"init", "reinit"},
}

// TestHelpExitsZero: -h and --help exit 0 and print a usage for every registered command and subcommand
// (proxy, serve, ca, config, holds and sdn exited 2).
func TestHelpExitsZero(t *testing.T) {
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		invocations := [][]string{{n}}
		for _, sub := range subcommands[n] {
			invocations = append(invocations, []string{n, sub})
		}
		for _, inv := range invocations {
			for _, h := range []string{"-h", "--help"} {
				args := append(append([]string{}, inv...), h)
				var out, errb bytes.Buffer
				code := runMain(args, nil, &out, &errb)
				if code != 0 {
					t.Errorf("payguard %s: exit %d, want 0\nstderr: %s", strings.Join(args, " "), code, errb.String())
					continue
				}
				if !strings.Contains(strings.ToLower(out.String()+errb.String()), "usage") {
					t.Errorf("payguard %s: no usage printed", strings.Join(args, " "))
				}
			}
		}
	}
	// Bad usage is still an error.
	for _, args := range [][]string{{"proxy", "--no-such-flag"}, {"serve", "extra"}, {"sdn"}, {"ca"}, {"nope"}} {
		var out bytes.Buffer
		if code := runMain(args, nil, &out, &out); code != 2 {
			t.Errorf("payguard %s: exit %d, want 2", strings.Join(args, " "), code)
		}
	}
}

// helpInvocations is every command and subcommand, as words.
func helpInvocations() [][]string {
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	var out [][]string
	for _, n := range names {
		out = append(out, []string{n})
		subs := map[string]bool{}
		for _, sub := range subcommands[n] {
			subs[sub] = true
		}
		// (Every subcommand internal/cli/help.go documents is held to the shape there too:
		// TestEveryHelpDocHasOneShape, so a new one is checked without a list here.)
		sorted := make([]string, 0, len(subs))
		for sub := range subs {
			sorted = append(sorted, sub)
		}
		sort.Strings(sorted)
		for _, sub := range sorted {
			out = append(out, []string{n, sub})
		}
	}
	return out
}

// flagLine is how a flag is listed: the double dash the docs use and, for a flag with a value, one upper-case
// name for it. Go's flag package takes the first back-quoted word of a usage text as that name, which made
// `payguard preflight -h` print "-config payguard proxy".
var flagLine = regexp.MustCompile(`^  --[a-z][a-z0-9-]*( [A-Z][A-Z_]*)?$`)

// TestEveryHelpHasOneShape: every command's and subcommand's -h, on stdout, is: what it does (a sentence),
// "Usage:" with call forms, "Flags:" (each flag as "--name VALUE" with its text below, or a line saying there
// are none or where they are), and "Example:" with a command that starts with payguard.
func TestEveryHelpHasOneShape(t *testing.T) {
	for _, inv := range helpInvocations() {
		name := strings.Join(inv, " ")
		t.Run(name, func(t *testing.T) {
			var out, errb bytes.Buffer
			if code := runMain(append(append([]string{}, inv...), "-h"), nil, &out, &errb); code != 0 {
				t.Fatalf("exit %d", code)
			}
			if errb.Len() != 0 {
				t.Errorf("help wrote to stderr: %q", errb.String())
			}
			lines := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
			if len(lines) < 7 || strings.TrimSpace(lines[0]) == "" || strings.HasPrefix(strings.ToLower(lines[0]), "usage") ||
				!strings.HasSuffix(lines[0], ".") || lines[1] != "" {
				t.Fatalf("help does not open with a sentence saying what the command does:\n%s", out.String())
			}
			section := func(prefix string) int {
				for i, l := range lines {
					if strings.HasPrefix(l, prefix) {
						return i
					}
				}
				t.Fatalf("no %q section:\n%s", prefix, out.String())
				return -1
			}
			u, f, e := section("Usage:"), section("Flags:"), section("Example:")
			if !(u < f && f < e) {
				t.Fatalf("sections out of order (Usage %d, Flags %d, Example %d):\n%s", u, f, e, out.String())
			}
			if lines[u] != "Usage:" || !strings.HasPrefix(lines[u+1], "  payguard "+inv[0]) {
				t.Errorf("Usage section does not list call forms:\n%s", out.String())
			}
			if lines[f] == "Flags:" {
				for i := f + 1; i < e && lines[i] != ""; i += 2 {
					if !flagLine.MatchString(lines[i]) {
						t.Errorf("flag line %q is not \"  --name VALUE\"", lines[i])
					}
					if i+1 >= e || !strings.HasPrefix(lines[i+1], "      ") || strings.TrimSpace(lines[i+1]) == "" {
						t.Errorf("flag %q has no description", lines[i])
					}
				}
			} else if strings.TrimSpace(strings.TrimPrefix(lines[f], "Flags:")) == "" {
				t.Errorf("empty Flags section")
			}
			if lines[e] != "Example:" || e+1 >= len(lines) || !strings.HasPrefix(lines[e+1], "  payguard ") {
				t.Errorf("no example command after Example:\n%s", out.String())
			}
		})
	}
}

// TestNoArgumentsIsBadUsage: bare `payguard` exits 2 with the command list on stderr (it exited 0).
func TestNoArgumentsIsBadUsage(t *testing.T) {
	var out, errb bytes.Buffer
	if code := runMain(nil, nil, &out, &errb); code != 2 {
		t.Errorf("exit %d, want 2", code)
	}
	if out.Len() != 0 || !strings.Contains(errb.String(), "Usage: payguard <command>") {
		t.Errorf("stdout %q, stderr %q", out.String(), errb.String())
	}
}

// TestServeHelpIsAboutServe: serve has no interception CA and no admin token; its help must not speak of them
// (--data-dir's text was the proxy's).
func TestServeHelpIsAboutServe(t *testing.T) {
	var out bytes.Buffer
	runMain([]string{"serve", "-h"}, nil, &out, &out)
	for _, w := range []string{"MITM", " CA", "admin token"} {
		if strings.Contains(out.String(), w) {
			t.Errorf("serve -h mentions %q:\n%s", w, out.String())
		}
	}
}

// TestBadFlagPrintsUsageOnStderr: a bad flag exits 2 with flag's message and the call forms on stderr, and
// nothing on stdout.
func TestBadFlagPrintsUsageOnStderr(t *testing.T) {
	var out, errb bytes.Buffer
	if code := runMain([]string{"check", "--nope"}, nil, &out, &errb); code != 2 {
		t.Errorf("exit %d", code)
	}
	if out.Len() != 0 || !strings.Contains(errb.String(), "flag provided but not defined: -nope") ||
		!strings.Contains(errb.String(), "  payguard check --batch") || !strings.Contains(errb.String(), "payguard check -h") {
		t.Errorf("stdout %q\nstderr %q", out.String(), errb.String())
	}
}
