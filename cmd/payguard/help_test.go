package main

import (
	"bytes"
	"sort"
	"strings"
	"testing"
)

// subcommands names, for every command that dispatches on a second word, the words it knows; asking one of
// them for help must succeed as well.
var subcommands = map[string][]string{
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
