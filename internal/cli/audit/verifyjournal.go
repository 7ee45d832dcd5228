package audit

import (
	"fmt"
	"io"
	"os"

	"github.com/payguard/payguard/proxy"
)

// verifyJournalFile verifies every line of a decision journal (proxy.VerifyJournal) and says how many lines
// verified; any line that does not is named, and the exit status is 1.
func verifyJournalFile(path string, jwks []byte, stdout, stderr io.Writer) int {
	f, err := os.Open(path)
	if err != nil {
		fmt.Fprintf(stderr, "payguard verify-receipt: --journal: %v\n", err)
		return 2
	}
	defer f.Close()
	ok, failures := proxy.VerifyJournal(f, jwks)
	for _, e := range failures {
		fmt.Fprintf(stderr, "payguard verify-receipt: invalid: %v\n", e)
	}
	if len(failures) > 0 {
		fmt.Fprintf(stdout, "%d valid, %d invalid\n", ok, len(failures))
		return 1
	}
	fmt.Fprintf(stdout, "valid: %d decisions\n", ok)
	return 0
}
