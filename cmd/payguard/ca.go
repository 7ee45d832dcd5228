package main

import (
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/payguard/payguard/proxy/mitm"
)

func init() {
	register("ca", command{summary: "manage the proxy's interception CA (ca init)", run: runCA})
}

func runCA(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 && isHelp(args[0]) {
		writeHelp(stdout, "ca", nil)
		return 0
	}
	if len(args) == 0 || args[0] != "init" {
		writeUsage(stderr, "ca")
		return 2
	}
	fs := flag.NewFlagSet("ca init", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("out", "./payguard-data/ca", "directory for "+mitm.CACertFileName+" and "+mitm.CAKeyFileName)
	if code, done := parseSubcommandFlags(fs, args[1:], stdout); done {
		return code
	}
	if fs.NArg() != 0 {
		fmt.Fprintf(stderr, "payguard ca init: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	certPEM, keyPEM, err := mitm.NewCA("payguard MITM CA", time.Now())
	if err != nil {
		fmt.Fprintln(stderr, "payguard ca init:", err)
		return 1
	}
	certPath := filepath.Join(*out, mitm.CACertFileName)
	keyPath := filepath.Join(*out, mitm.CAKeyFileName)
	if err := mitm.WriteCA(certPath, keyPath, certPEM, keyPEM); err != nil {
		fmt.Fprintln(stderr, "payguard ca init:", err)
		return 1
	}
	fmt.Fprintf(stdout, "wrote %s (trust this certificate in the agent)\nwrote %s (mode 0600; keep it private)\n", certPath, keyPath)
	return 0
}
