package keys

import (
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/payguard/payguard/internal/cli"
	"github.com/payguard/payguard/proxy/mitm"
)

// CA is `payguard ca`.
var CA = cli.Command{Summary: "manage the proxy's interception CA (ca init)", Run: runCA}

func runCA(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 && cli.IsHelp(args[0]) {
		cli.WriteHelp(stdout, "ca", nil)
		return 0
	}
	if len(args) == 0 || args[0] != "init" {
		cli.WriteUsage(stderr, "ca")
		return 2
	}
	fs := flag.NewFlagSet("ca init", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("out", "./payguard-data/ca", "directory for "+mitm.CACertFileName+" and "+mitm.CAKeyFileName)
	if code, done := cli.ParseFlags(fs, args[1:], stdout); done {
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
