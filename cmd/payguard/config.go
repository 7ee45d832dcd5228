package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/payguard/payguard/config"
)

func init() {
	register("config", command{summary: "check a configuration file (config validate FILE) or print the default (config default)", run: runConfig})
}

func runConfig(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	switch {
	case len(args) > 0 && isHelp(args[0]):
		writeHelp(stdout, "config", nil)
		return 0
	case len(args) > 1 && isHelp(args[len(args)-1]):
		writeHelp(stdout, "config "+args[0], nil)
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
		writeRuleWarnings(stderr, "config validate", cfg.Rules)
		fmt.Fprintln(stdout, "ok")
		return 0
	case len(args) == 1 && args[0] == "default":
		_, _ = stdout.Write(config.DefaultYAML())
		return 0
	}
	writeUsage(stderr, "config")
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
