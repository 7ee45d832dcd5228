package docscheck

import (
	"fmt"
	"os/exec"
	"regexp"
	"strings"
)

// CLI is what the payguard binary says about itself: its commands, their subcommands and each one's flags.
type CLI struct {
	// Flags maps "cmd" or "cmd sub" to the flag names it accepts (without dashes).
	Flags map[string]map[string]bool
	// Subs maps a dispatching command to its subcommands.
	Subs map[string]map[string]bool
}

var (
	commandLineRE = regexp.MustCompile(`^  ([a-z][a-z-]*) {2,}`)
	flagLineRE    = regexp.MustCompile(`^  --([a-z][a-z0-9-]*)`)
	usageLineRE   = regexp.MustCompile(`^  payguard ([a-z-]+)(?: ([a-z][a-z-]*))?`)
)

// ReadCLI asks the binary at bin for its help (payguard -h, then each command's and subcommand's -h).
func ReadCLI(bin string) (*CLI, error) {
	help := func(args ...string) (string, error) {
		out, err := exec.Command(bin, append(args, "-h")...).CombinedOutput()
		if err != nil {
			return "", fmt.Errorf("%s %s -h: %v\n%s", bin, strings.Join(args, " "), err, out)
		}
		return string(out), nil
	}
	top, err := help()
	if err != nil {
		return nil, err
	}
	c := &CLI{Flags: map[string]map[string]bool{}, Subs: map[string]map[string]bool{}}
	for _, l := range strings.Split(top, "\n") {
		m := commandLineRE.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		name := m[1]
		h, err := help(name)
		if err != nil {
			return nil, err
		}
		c.Flags[name] = flagsOf(h)
		for _, ul := range strings.Split(h, "\n") {
			um := usageLineRE.FindStringSubmatch(ul)
			if um == nil || um[1] != name || um[2] == "" {
				continue
			}
			if c.Subs[name] == nil {
				c.Subs[name] = map[string]bool{}
			}
			c.Subs[name][um[2]] = true
		}
		for sub := range c.Subs[name] {
			h, err := help(name, sub)
			if err != nil {
				return nil, err
			}
			c.Flags[name+" "+sub] = flagsOf(h)
		}
	}
	if len(c.Flags) == 0 {
		return nil, fmt.Errorf("%s -h lists no commands:\n%s", bin, top)
	}
	return c, nil
}

func flagsOf(help string) map[string]bool {
	out := map[string]bool{"h": true, "help": true}
	for _, l := range strings.Split(help, "\n") {
		if m := flagLineRE.FindStringSubmatch(l); m != nil {
			out[m[1]] = true
		}
	}
	return out
}

// invocationRE finds a payguard invocation where a shell command starts (a line, after a prompt or
// environment assignments, after &&, ;, | or $( ): the binary by any path, or go run ./cmd/payguard, then
// its words up to the next shell operator.
var invocationRE = regexp.MustCompile(`(?:^\s*(?:\$ )?(?:[A-Z_][A-Z0-9_]*=\S+ +)*|&& +|; +|\| +|\$\(|\()(?:\S*/)?(?:go run \./cmd/payguard|payguard)((?: +[^\s|;&><#)]+)+)`)

// Commands checks every payguard invocation in a document (fenced blocks and code spans alike): the
// command, the subcommand of a dispatching command, and each --flag must be ones the binary has.
func Commands(d Doc, cli *CLI) []Problem {
	var out []Problem
	inCode := fences(d.Lines)
	for i, l := range d.Lines {
		var texts []string
		if inCode[i] {
			texts = []string{l}
		} else {
			for _, m := range codeRE.FindAllStringSubmatch(l, -1) {
				texts = append(texts, m[1])
			}
		}
		for _, text := range texts {
			for _, m := range invocationRE.FindAllStringSubmatch(text, -1) {
				if p := checkInvocation(strings.Fields(m[1]), cli); p != "" {
					out = append(out, Problem{d.Path, i + 1, p})
				}
			}
		}
	}
	return out
}

// checkInvocation returns what is wrong with `payguard words...`, or "".
func checkInvocation(words []string, cli *CLI) string {
	if len(words) == 0 {
		return ""
	}
	cmd := words[0]
	if strings.HasPrefix(cmd, "-") || strings.ContainsAny(cmd, "<[{$'\"") || cmd == "is" {
		return "" // `payguard --version`, a placeholder, or prose such as "payguard is"
	}
	if _, ok := cli.Flags[cmd]; !ok {
		if !regexp.MustCompile(`^[a-z][a-z-]*$`).MatchString(cmd) {
			return "" // prose or a table row ("payguard's", "payguard 710 ..."), not a command
		}
		return fmt.Sprintf("`payguard %s`: there is no such command (payguard -h lists them)", cmd)
	}
	key, rest := cmd, words[1:]
	if subs := cli.Subs[cmd]; subs != nil && len(rest) > 0 && !strings.HasPrefix(rest[0], "-") {
		sub := strings.Trim(rest[0], "[]")
		if strings.ContainsAny(sub, "<{|") || strings.ToUpper(sub) == sub {
			return ""
		}
		if !subs[sub] {
			return fmt.Sprintf("`payguard %s %s`: %s has no subcommand %q (payguard %s -h lists them)", cmd, sub, cmd, sub, cmd)
		}
		key, rest = cmd+" "+sub, rest[1:]
	}
	for _, w := range rest {
		w = strings.Trim(w, "[]")
		if !strings.HasPrefix(w, "-") || w == "-" || w == "--" {
			continue
		}
		name, _, _ := strings.Cut(strings.TrimLeft(w, "-"), "=")
		name = strings.TrimRight(name, ".,:")
		if name == "" || !regexp.MustCompile(`^[a-z][a-z0-9-]*$`).MatchString(name) {
			continue
		}
		if !cli.Flags[key][name] {
			return fmt.Sprintf("`payguard %s ... --%s`: %s has no flag --%s (payguard %s -h lists its flags)", key, name, key, name, key)
		}
	}
	return ""
}
