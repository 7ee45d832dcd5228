// Command payguard is the payment guard for AI agents that pay with x402: a forward proxy sidecar
// (payguard proxy) and the public screening service (payguard serve), plus the command-line tools around
// them. Each subcommand lives in its own file and registers itself in commands.
package main

import (
	"fmt"
	"io"
	"os"
	"sort"
)

// command is one subcommand. run gets the arguments after the subcommand's name and returns the exit code:
// 0 success, 1 failure, 2 bad usage or bad input.
type command struct {
	summary string
	run     func(args []string, stdin io.Reader, stdout, stderr io.Writer) int
}

// commands is filled by the init functions of the subcommand files.
var commands = map[string]command{}

func register(name string, c command) {
	if _, dup := commands[name]; dup {
		panic("payguard: command registered twice: " + name)
	}
	commands[name] = c
}

func main() {
	os.Exit(runMain(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func runMain(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		// No command is bad usage (exit 2, like an unknown one): a script that forgot its argument must not
		// look as if it succeeded.
		usage(stderr)
		return 2
	}
	if isHelp(args[0]) {
		usage(stdout)
		return 0
	}
	if args[0] == "--version" || args[0] == "-version" {
		args = append([]string{"version"}, args[1:]...)
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "payguard: unknown command %q\n\n", args[0])
		usage(stderr)
		return 2
	}
	return c.run(args[1:], stdin, stdout, stderr)
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "payguard: the payment guard for AI agents that pay with x402")
	fmt.Fprintln(w, "\nUsage: payguard <command> [flags]\n\nCommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-16s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w, "\nRun 'payguard <command> -h' for a command's flags.")
}
