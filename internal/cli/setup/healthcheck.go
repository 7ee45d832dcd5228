package setup

import (
	"flag"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/payguard/payguard/internal/cli"
)

// Healthcheck is `payguard healthcheck`.
var Healthcheck = cli.Command{Summary: "exit 0 when a payguard health endpoint answers 200 (the image's HEALTHCHECK)", Run: runHealthcheck}

// runHealthcheck is the container image's HEALTHCHECK: distroless has no shell or curl, so the binary asks
// itself. It fails closed: any answer but 200 within the timeout, or no answer, exits 1.
func runHealthcheck(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("healthcheck", flag.ContinueOnError)
	fs.SetOutput(stderr)
	url := fs.String("url", "http://127.0.0.1:8403/healthz", "the health URL (the proxy's admin /healthz; serve's /health)")
	timeout := fs.Duration("timeout", 3*time.Second, "how long to wait for the answer")
	if code, done := cli.ParseFlags(fs, args, stdout); done {
		return code
	}
	if fs.NArg() != 0 {
		fmt.Fprintf(stderr, "payguard healthcheck: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	client := &http.Client{Timeout: *timeout}
	resp, err := client.Get(*url)
	if err != nil {
		fmt.Fprintln(stderr, "payguard healthcheck:", err)
		return 1
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		fmt.Fprintf(stderr, "payguard healthcheck: %s answered %d\n", *url, resp.StatusCode)
		return 1
	}
	fmt.Fprintln(stdout, "ok")
	return 0
}
