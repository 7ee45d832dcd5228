package setup

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/payguard/payguard/internal/cli"
	"github.com/payguard/payguard/policy"
)

// Rules is `payguard rules`.
var Rules = cli.Command{Summary: "print the default rules (rules default) or check a rules file (rules validate FILE)", Run: runRules}

func runRules(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		cli.WriteUsage(stderr, "rules")
		return 2
	}
	if cli.IsHelp(args[0]) {
		cli.WriteHelp(stdout, "rules", nil)
		return 0
	}
	if cli.IsHelp(args[len(args)-1]) {
		cli.WriteHelp(stdout, "rules "+args[0], nil)
		return 0
	}
	switch args[0] {
	case "default":
		if len(args) != 1 {
			cli.WriteUsage(stderr, "rules default")
			return 2
		}
		return printRules(policy.DefaultRules(), stdout, stderr)
	case "validate":
		if len(args) != 2 {
			cli.WriteUsage(stderr, "rules validate")
			return 2
		}
		r, err := cli.ReadRulesFile(args[1], policy.DefaultRules())
		if err != nil {
			fmt.Fprintf(stderr, "payguard rules validate: %s: %v\n", args[1], err)
			return 2
		}
		cli.WriteRuleWarnings(stderr, "rules validate", r)
		return printRules(r, stdout, stderr)
	default:
		fmt.Fprintf(stderr, "payguard rules: unknown subcommand %q\n", args[0])
		cli.WriteUsage(stderr, "rules")
		return 2
	}
}

func printRules(r policy.Rules, stdout, stderr io.Writer) int {
	out, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		fmt.Fprintf(stderr, "payguard rules: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "%s\n", out)
	return 0
}
