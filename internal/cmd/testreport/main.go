// Command testreport is scripts/test.sh's reader of test output (see internal/testreport):
//
//	go test -json ./... | testreport go COUNTS   render go test's events; write "passed failed skipped" to COUNTS
//	testreport count node|pytest LOG             print the counts of a runner's closing lines (exit 1: none found)
//	testreport summary RESULTS                   print the summary table; exit 1 when a suite failed
package main

import (
	"fmt"
	"os"

	"github.com/payguard/payguard/internal/testreport"
)

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	if len(args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: testreport go COUNTS | testreport count node|pytest LOG | testreport summary RESULTS")
		return 2
	}
	switch args[0] {
	case "go":
		c, err := testreport.Go(os.Stdin, os.Stdout)
		if err != nil {
			fmt.Fprintln(os.Stderr, "testreport: reading go test -json:", err)
			c.Failed++
		}
		if err := os.WriteFile(args[1], fmt.Appendf(nil, "%d %d %d\n", c.Passed, c.Failed, c.Skipped), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "testreport:", err)
			return 1
		}
		return 0
	case "count":
		if len(args) != 3 {
			fmt.Fprintln(os.Stderr, "usage: testreport count node|pytest LOG")
			return 2
		}
		f, err := os.Open(args[2])
		if err != nil {
			fmt.Fprintln(os.Stderr, "testreport:", err)
			return 1
		}
		defer f.Close()
		var c testreport.Counts
		var ok bool
		switch args[1] {
		case "node":
			c, ok = testreport.Node(f)
		case "pytest":
			c, ok = testreport.Pytest(f)
		default:
			fmt.Fprintf(os.Stderr, "testreport: unknown runner %q (node or pytest)\n", args[1])
			return 2
		}
		if !ok {
			return 1
		}
		fmt.Printf("%d %d %d\n", c.Passed, c.Failed, c.Skipped)
		return 0
	case "summary":
		f, err := os.Open(args[1])
		if err != nil {
			fmt.Fprintln(os.Stderr, "testreport:", err)
			return 1
		}
		defer f.Close()
		suites, err := testreport.ReadSuites(f)
		if err != nil {
			fmt.Fprintln(os.Stderr, "testreport:", err)
			return 1
		}
		return testreport.Summary(os.Stdout, suites)
	}
	fmt.Fprintf(os.Stderr, "testreport: unknown command %q\n", args[0])
	return 2
}
