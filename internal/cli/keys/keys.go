// Package keys holds the commands that make payguard's key material: `payguard keys` (the receipt signing
// keys: generate, rotate, publish the JWKS) and `payguard ca` (the proxy's interception CA).
package keys

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/payguard/payguard/internal/cli"
	"github.com/payguard/payguard/receipts"
)

// ReceiptKeys is `payguard keys`.
var ReceiptKeys = cli.Command{Summary: "manage receipt signing keys (keys generate | rotate | jwks)", Run: runKeys}

func runKeys(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		cli.WriteUsage(stderr, "keys")
		return 2
	}
	switch args[0] {
	case "-h", "--help", "-help", "help":
		cli.WriteHelp(stdout, "keys", nil)
		return 0
	case "generate":
		return runKeysGenerate(args[1:], stdout, stderr)
	case "rotate":
		return runKeysRotate(args[1:], stdout, stderr)
	case "jwks":
		return runKeysJWKS(args[1:], stdout, stderr)
	default:
		fmt.Fprintf(stderr, "payguard keys: unknown subcommand %q\n", args[0])
		cli.WriteUsage(stderr, "keys")
		return 2
	}
}

func runKeysGenerate(args []string, stdout, stderr io.Writer) int {
	fset := flag.NewFlagSet("payguard keys generate", flag.ContinueOnError)
	fset.SetOutput(stderr)
	out := fset.String("out", "", "key file to create (refused if it exists: rotate instead)")
	jwks := fset.String("jwks", "", "also write the public key set to this file")
	if code, done := cli.ParseFlags(fset, args, stdout); done {
		return code
	}
	if *out == "" || fset.NArg() > 0 {
		fmt.Fprintln(stderr, "payguard keys generate: --out FILE is required")
		return 2
	}
	// Overwriting a key file would silently invalidate every receipt it signed.
	if _, err := os.Stat(*out); err == nil {
		fmt.Fprintf(stderr, "payguard keys generate: %s exists; use 'payguard keys rotate --keys %s' to add a key\n", *out, *out)
		return 1
	} else if !errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(stderr, "payguard keys generate: %v\n", err)
		return 1
	}
	k, err := receipts.GenerateKey(time.Now())
	if err != nil {
		fmt.Fprintf(stderr, "payguard keys generate: %v\n", err)
		return 1
	}
	if err := saveKeys(k, *out, *jwks); err != nil {
		fmt.Fprintf(stderr, "payguard keys generate: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "generated key %s in %s\n", k.ActiveKeyID(), *out)
	return 0
}

func runKeysRotate(args []string, stdout, stderr io.Writer) int {
	fset := flag.NewFlagSet("payguard keys rotate", flag.ContinueOnError)
	fset.SetOutput(stderr)
	path := fset.String("keys", "", "key file to rotate in place")
	jwks := fset.String("jwks", "", "also write the public key set to this file")
	if code, done := cli.ParseFlags(fset, args, stdout); done {
		return code
	}
	if *path == "" || fset.NArg() > 0 {
		fmt.Fprintln(stderr, "payguard keys rotate: --keys FILE is required")
		return 2
	}
	k, err := receipts.LoadKeySet(*path)
	if err != nil {
		fmt.Fprintf(stderr, "payguard keys rotate: %v\n", err)
		return 1
	}
	next, err := receipts.GenerateKey(time.Now())
	if err != nil {
		fmt.Fprintf(stderr, "payguard keys rotate: %v\n", err)
		return 1
	}
	k.Add(next)
	if err := saveKeys(k, *path, *jwks); err != nil {
		fmt.Fprintf(stderr, "payguard keys rotate: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "active key is now %s; %d keys in %s\n", k.ActiveKeyID(), len(k.KeyIDs()), *path)
	return 0
}

func runKeysJWKS(args []string, stdout, stderr io.Writer) int {
	fset := flag.NewFlagSet("payguard keys jwks", flag.ContinueOnError)
	fset.SetOutput(stderr)
	path := fset.String("keys", "", "key file")
	if code, done := cli.ParseFlags(fset, args, stdout); done {
		return code
	}
	if *path == "" || fset.NArg() > 0 {
		fmt.Fprintln(stderr, "payguard keys jwks: --keys FILE is required")
		return 2
	}
	k, err := receipts.LoadKeySet(*path)
	if err != nil {
		fmt.Fprintf(stderr, "payguard keys jwks: %v\n", err)
		return 1
	}
	doc, err := k.PublicJWKS()
	if err != nil {
		fmt.Fprintf(stderr, "payguard keys jwks: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "%s\n", doc)
	return 0
}

func saveKeys(k *receipts.KeySet, path, jwksPath string) error {
	if jwksPath != "" && filepath.Clean(jwksPath) == filepath.Clean(path) {
		// The public set would overwrite the private keys it was made from.
		return fmt.Errorf("--jwks %s is the key file itself; give the public key set its own file", jwksPath)
	}
	if err := k.Save(path); err != nil {
		return err
	}
	if jwksPath == "" {
		return nil
	}
	doc, err := k.PublicJWKS()
	if err != nil {
		return err
	}
	return os.WriteFile(jwksPath, append(doc, '\n'), 0o644)
}
