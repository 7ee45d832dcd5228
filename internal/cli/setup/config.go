// Package setup holds the commands that set a deployment up and check it: `payguard config` (validate a
// file, print the default), `payguard rules`, `payguard agents add` (an agent's credentials), `payguard env`
// (the exports that point an agent at the proxy), `payguard store` (a ledger's epoch) and `payguard
// healthcheck` (the container image's probe).
package setup

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/payguard/payguard/config"
	"github.com/payguard/payguard/internal/cli"
)

// Config is `payguard config`.
var Config = cli.Command{Summary: "check a configuration file (config validate FILE) or print the default (config default)", Run: runConfig}

func runConfig(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	switch {
	case len(args) > 0 && cli.IsHelp(args[0]):
		cli.WriteHelp(stdout, "config", nil)
		return 0
	case len(args) > 1 && cli.IsHelp(args[len(args)-1]):
		cli.WriteHelp(stdout, "config "+args[0], nil)
		return 0
	case len(args) == 2 && args[0] == "validate":
		cfg, err := config.Load(args[1])
		if err != nil {
			problems := problemLines(err)
			fmt.Fprintf(stderr, "payguard config validate: %s: %d problem(s):\n", args[1], len(problems))
			for _, p := range problems {
				fmt.Fprintf(stderr, "  - %s\n", p)
			}
			return 2
		}
		cli.WriteRuleWarnings(stderr, "config validate", cfg.Rules)
		for _, d := range cfg.Deprecations() {
			fmt.Fprintf(stderr, "payguard config validate: warning: %s\n", d)
		}
		fmt.Fprintln(stdout, "ok")
		return 0
	case len(args) == 1 && args[0] == "default":
		_, _ = stdout.Write(config.DefaultYAML())
		return 0
	}
	cli.WriteUsage(stderr, "config")
	return 2
}

// problemLines is every problem an error reports, one per entry: config.Load joins them (errors.Join), and a
// decoder's message may hold several lines. The "config FILE: " prefix the loader adds is left out.
func problemLines(err error) []string {
	var out []string
	var walk func(error)
	walk = func(e error) {
		if j, ok := e.(interface{ Unwrap() []error }); ok {
			for _, x := range j.Unwrap() {
				walk(x)
			}
			return
		}
		if inner := errors.Unwrap(e); inner != nil {
			if _, ok := inner.(interface{ Unwrap() []error }); ok {
				walk(inner)
				return
			}
		}
		for _, l := range strings.Split(e.Error(), "\n") {
			if l = strings.TrimSpace(l); l != "" {
				out = append(out, l)
			}
		}
	}
	walk(err)
	return out
}
