package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"

	"github.com/payguard/payguard/internal/buildinfo"
	"github.com/payguard/payguard/internal/cli"
)

// runVersion prints buildinfo.Read: one line, or JSON with --json (for scripts: the release check compares
// the image's version with the chart's appVersion).
func runVersion(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("version", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print JSON: version, commit, go_version")
	if code, done := cli.ParseFlags(fs, args, stdout); done {
		return code
	}
	if fs.NArg() != 0 {
		fmt.Fprintf(stderr, "payguard version: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	info := buildinfo.Read()
	if *asJSON {
		b, _ := json.Marshal(info)
		fmt.Fprintln(stdout, string(b))
		return 0
	}
	fmt.Fprintln(stdout, info.String())
	return 0
}
