// Command payguard is the payment guard for AI agents that pay with x402: a forward proxy sidecar
// (payguard proxy) and the public screening service (payguard serve), plus the command-line tools around
// them. It parses flags and dispatches: the processes are put together in internal/app, the other
// subcommands live in internal/cli's packages, and commands lists them all.
package main

import (
	"fmt"
	"io"
	"os"
	"sort"

	"github.com/payguard/payguard/internal/cli"
	"github.com/payguard/payguard/internal/cli/audit"
	"github.com/payguard/payguard/internal/cli/holds"
	"github.com/payguard/payguard/internal/cli/keys"
	"github.com/payguard/payguard/internal/cli/screen"
	"github.com/payguard/payguard/internal/cli/setup"
)

// commands are payguard's subcommands by name. Each Run gets the arguments after the subcommand's name and
// returns the exit code: 0 success, 1 failure, 2 bad usage or bad input.
var commands = map[string]cli.Command{
	"proxy":          {Summary: "run the forward proxy that guards an agent's x402 payments", Run: runProxy},
	"serve":          {Summary: "run the public pay-per-call screening API (x402), default 127.0.0.1:8080", Run: runServe},
	"version":        {Summary: "print the version, commit and Go version of this binary", Run: runVersion},
	"agents":         setup.Agents,
	"ca":             keys.CA,
	"check":          screen.Check,
	"config":         setup.Config,
	"env":            setup.Env,
	"healthcheck":    setup.Healthcheck,
	"holds":          holds.Command,
	"keys":           keys.ReceiptKeys,
	"preflight":      screen.Preflight,
	"rules":          setup.Rules,
	"sdn":            screen.SDN,
	"store":          setup.Store,
	"verify-receipt": audit.VerifyReceipt,
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
	if cli.IsHelp(args[0]) {
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
	return c.Run(args[1:], stdin, stdout, stderr)
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
		fmt.Fprintf(w, "  %-16s %s\n", n, commands[n].Summary)
	}
	fmt.Fprintln(w, "\nRun 'payguard <command> -h' for a command's flags.")
}
