// Package audit is `payguard verify-receipt`: checking, offline and against pinned keys, what payguard
// signed (a PreflightResult, a receipt JWS, or a whole decision journal).
package audit

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/payguard/payguard/internal/cli"
	"github.com/payguard/payguard/receipts"
)

// VerifyReceipt is `payguard verify-receipt`.
var VerifyReceipt = cli.Command{Summary: "verify a PreflightResult or receipt JWS offline against pinned keys", Run: runVerifyReceipt}

// maxReceiptInput bounds what verify-receipt reads: a result is at most a few KiB.
const maxReceiptInput = 1 << 20

func runVerifyReceipt(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("payguard verify-receipt", flag.ContinueOnError)
	fs.SetOutput(stderr)
	keysFile := fs.String("keys", "", "pinned keys: the public JWKS, or a key file (its private parts are ignored)")
	archival := fs.Bool("archival", false, "skip only the maximum-age check (for receipts kept in an archive)")
	maxAge := fs.Duration("max-age", receipts.DefaultMaxAge, "maximum receipt age (60s of clock tolerance is added)")
	inFile := fs.String("in", "", "read the result or JWS from this file instead of stdin")
	journalFile := fs.String("journal", "", "verify every line of a decision journal file (receipt age is not checked)")
	if code, done := cli.ParseFlags(fs, args, stdout); done {
		return code
	}
	if *keysFile == "" || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "payguard verify-receipt: --keys JWKS_OR_KEYFILE is required")
		return 2
	}
	if *maxAge <= 0 {
		fmt.Fprintln(stderr, "payguard verify-receipt: --max-age must be positive")
		return 2
	}
	jwks, err := os.ReadFile(*keysFile)
	if err != nil {
		fmt.Fprintf(stderr, "payguard verify-receipt: --keys: %v\n", err)
		return 2
	}
	if *journalFile != "" {
		return verifyJournalFile(*journalFile, jwks, stdout, stderr) // verifyjournal.go
	}
	r := stdin
	if *inFile != "" {
		f, err := os.Open(*inFile)
		if err != nil {
			fmt.Fprintf(stderr, "payguard verify-receipt: --in: %v\n", err)
			return 2
		}
		defer f.Close()
		r = f
	}
	data, err := io.ReadAll(io.LimitReader(r, maxReceiptInput))
	if err != nil {
		fmt.Fprintf(stderr, "payguard verify-receipt: read input: %v\n", err)
		return 2
	}
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		fmt.Fprintln(stderr, "payguard verify-receipt: no input: pipe a PreflightResult JSON or a receipt JWS on stdin")
		return 2
	}
	opts := receipts.VerifyOptions{MaxAge: *maxAge, Archival: *archival, Now: time.Now}
	if data[0] == '{' {
		err = receipts.VerifyResult(data, jwks, opts)
	} else {
		_, _, err = receipts.Verify(string(data), jwks, opts)
	}
	if err != nil {
		fmt.Fprintf(stderr, "payguard verify-receipt: invalid: %v\n", err)
		return 1
	}
	fmt.Fprintln(stdout, "valid")
	return 0
}
