// Package screen holds the command-line tools that screen and decide without a running server: `payguard
// check` (a payee against the SDN list and domain facts), `payguard preflight` (one PreflightInput through
// the engine, signed) and `payguard sdn` (download or describe the OFAC list).
package screen

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/payguard/payguard/config"
	"github.com/payguard/payguard/internal/cli"
	"github.com/payguard/payguard/policy"
	"github.com/payguard/payguard/preflight"
	"github.com/payguard/payguard/receipts"
	"github.com/payguard/payguard/screening"
	"github.com/payguard/payguard/screening/domain"
)

// Preflight is `payguard preflight`.
var Preflight = cli.Command{Summary: "decide one PreflightInput (stdin or --in) and print the signed PreflightResult", Run: runPreflight}

// newDomainChecker returns the online domain checker (RDAP age, DNS) with the config's screening.domain
// settings, for `payguard preflight` without --offline (tests swap it). With --offline, domain facts are
// unknown (reported in payee.domain, never treated as evidence).
var newDomainChecker = func(c config.DomainConfig) screening.Domains { return domain.NewFromConfig(c) }

// preflightLookupTimeout bounds the whole decision, network lookups included.
const preflightLookupTimeout = 30 * time.Second

func runPreflight(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("payguard preflight", flag.ContinueOnError)
	fs.SetOutput(stderr)
	configPath := fs.String("config", "", "payguard.yaml: its rules, screening settings and receipt key file, as payguard proxy uses them (default: the embedded default, with SPEC's default rules)")
	rulesFile := fs.String("rules", "", "deployment rules file, JSON or YAML, over the config's rules (default: the defaults of docs/SPEC.md §3); the input's rules overlay it")
	keysFile := fs.String("keys", "", "receipt key file (JWK Set with private keys); default: the config's keys.receipt_key_file when --config is given and the file exists, else an ephemeral key whose receipts cannot be verified later")
	offline := fs.Bool("offline", false, "gather no network facts (domain age and DNS are reported unknown)")
	inFile := fs.String("in", "", "read the PreflightInput from this file instead of stdin")
	sanctionsDir := fs.String("sanctions-dir", "", "directory with the OFAC SDN data (sdn.csv set or SDN.XML); default: the list cached by 'payguard sdn update', if any")
	if code, done := cli.ParseFlags(fs, args, stdout); done {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "payguard preflight: unexpected argument %q\n", fs.Arg(0))
		return 2
	}

	cfg, err := config.Load(*configPath)
	if err != nil {
		fmt.Fprintf(stderr, "payguard preflight: --config: %v\n", err)
		return 2
	}
	// RDAP lookups never go through the proxy that HTTPS_PROXY names in the agent's shell (internal/egress).
	if err := cli.Egress(cfg, stderr); err != nil {
		fmt.Fprintf(stderr, "payguard preflight: %v\n", err)
		return 2
	}
	rules := policy.DefaultRules()
	if *configPath != "" {
		rules = cfg.Rules
	}
	if *rulesFile != "" {
		var err error
		if rules, err = cli.ReadRulesFile(*rulesFile, rules); err != nil {
			fmt.Fprintf(stderr, "payguard preflight: --rules: %v\n", err)
			return 2
		}
	}
	keyPath := *keysFile
	if keyPath == "" && *configPath != "" {
		if _, err := os.Stat(cfg.Keys.ReceiptKeyFile); err == nil {
			keyPath = cfg.Keys.ReceiptKeyFile // the proxy's key: these receipts verify against its JWKS
		}
	}
	signer, err := preflightSigner(keyPath)
	if err != nil {
		fmt.Fprintf(stderr, "payguard preflight: --keys: %v\n", err)
		return 2
	}
	// Bad input is refused before any list is loaded or any checker is built.
	body, err := readInput(*inFile, stdin)
	if err != nil {
		fmt.Fprintf(stderr, "payguard preflight: %v\n", err)
		return 2
	}
	in, err := preflight.ParseInput(body)
	if err != nil {
		fmt.Fprintf(stderr, "payguard preflight: %v\n", err)
		return 2
	}
	opts := preflight.Options{Rules: rules, Signer: signer}
	// The config's cache dir (the embedded default's without --config) is where 'payguard sdn update' wrote.
	list, err := checkSanctions("preflight", cfg.Screening.Sanctions, *sanctionsDir, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "payguard preflight: --sanctions-dir: %v\n", err)
		return 2
	}
	opts.Sanctions = list
	if !*offline {
		opts.Domains = newDomainChecker(cfg.Screening.Domain)
	}

	ctx, cancel := context.WithTimeout(context.Background(), preflightLookupTimeout)
	defer cancel()
	res, err := preflight.New(opts).Decide(ctx, in)
	if err != nil {
		fmt.Fprintf(stderr, "payguard preflight: %v\n", err)
		return 1
	}
	out, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		fmt.Fprintf(stderr, "payguard preflight: encode result: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "%s\n", out)
	return 0
}

// preflightSigner loads the key file, or makes an ephemeral key when there is none. The ephemeral key is
// not announced: the result is the only output, and its receipt simply cannot be verified once the command
// has exited (use --keys for receipts that must verify later).
func preflightSigner(path string) (*receipts.KeySet, error) {
	if path == "" {
		return receipts.GenerateKey(time.Now())
	}
	return receipts.LoadKeySet(path)
}

// readInput reads the input from a file or stdin, at most one byte past the body limit so that an oversized
// input is reported as such by ParseInput rather than read without bound.
func readInput(path string, stdin io.Reader) ([]byte, error) {
	r := stdin
	if path != "" {
		f, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("--in: %w", err)
		}
		defer f.Close()
		r = f
	}
	if r == nil {
		return nil, errors.New("no input: pass --in FILE or pipe the input on stdin")
	}
	data, err := io.ReadAll(io.LimitReader(r, preflight.MaxBodyBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read input: %w", err)
	}
	return data, nil
}
