package setup

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"net/url"

	"github.com/payguard/payguard/internal/cli"
	"github.com/payguard/payguard/policy"
	"github.com/payguard/payguard/proxy"
)

// Agents is `payguard agents`.
var Agents = cli.Command{Summary: "make an agent's credentials for the proxy (agents add --id NAME)", Run: runAgents}

// runAgents: `payguard agents add --id NAME [--cap USD]` makes a random secret and prints it once, with the
// proxy URL the agent uses and the agents.list entry for the configuration, which holds only the secret's
// SHA-256. The configuration file is not edited: paste the entry, then reload (SIGHUP or POST /v1/reload).
func runAgents(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		cli.WriteUsage(stderr, "agents")
		return 2
	}
	switch args[0] {
	case "-h", "--help", "-help", "help":
		cli.WriteHelp(stdout, "agents", nil)
		return 0
	case "add":
	default:
		fmt.Fprintf(stderr, "payguard agents: unknown subcommand %q\n", args[0])
		cli.WriteUsage(stderr, "agents")
		return 2
	}
	fs := flag.NewFlagSet("payguard agents add", flag.ContinueOnError)
	fs.SetOutput(stderr)
	id := fs.String("id", "", "the agent's id (1 to 63 of a-z 0-9 _ . -)")
	proxyURL := fs.String("proxy", "http://127.0.0.1:8402", "the proxy's address, for the HTTP(S)_PROXY line")
	capUSD := fs.String("cap", "", "the agent's own daily cap in USD (optional)")
	if code, done := cli.ParseFlags(fs, args[1:], stdout); done {
		return code
	}
	if !proxy.ValidAgentID(*id) || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "payguard agents add: --id must be 1 to 63 of a-z 0-9 _ . - (not default or other)")
		return 2
	}
	var capUSDText string
	if *capUSD != "" {
		c, err := policy.ParseUSD(*capUSD)
		if err != nil || c <= 0 {
			fmt.Fprintln(stderr, "payguard agents add: --cap must be a positive USD amount such as 5 or 0.50")
			return 2
		}
		capUSDText = c.String()
	}
	u, err := url.Parse(*proxyURL)
	if err != nil || u.Host == "" {
		fmt.Fprintln(stderr, "payguard agents add: --proxy must be a URL such as http://127.0.0.1:8402")
		return 2
	}
	var b [24]byte
	if _, err := rand.Read(b[:]); err != nil {
		fmt.Fprintf(stderr, "payguard agents add: %v\n", err)
		return 1
	}
	secret := hex.EncodeToString(b[:])
	sum := sha256.Sum256([]byte(secret))
	u.User = url.UserPassword(*id, secret)
	fmt.Fprintf(stdout, "# The agent's secret is shown once. Give the agent:\nHTTP_PROXY=%s\nHTTPS_PROXY=%s\n\n", u, u)
	fmt.Fprintf(stdout, "# Add to the configuration's agents.list (it holds only the secret's SHA-256), then reload:\n")
	fmt.Fprintf(stdout, "- id: %s\n  secret_sha256: %s\n", *id, hex.EncodeToString(sum[:]))
	if *capUSD != "" {
		fmt.Fprintf(stdout, "  daily_cap_usd: %s\n", capUSDText)
	}
	return 0
}
