package proxy

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/payguard/payguard/receipts"
)

// VerifyJournalEntry is what an auditor checks offline of one journal line, with the public receipt keys
// alone: the signed result verifies (receipts.VerifyResult: the signature, and every field as signed), its
// receipt's input_sha256 is the hash of the recorded input (so the agent id, the config hash, the spend and
// the challenge it was decided on are the ones signed), and the line's decision and receipt id are the
// signed ones. Receipt age is not checked: a journal is an archive.
func VerifyJournalEntry(e JournalEntry, jwks []byte) error {
	if err := receipts.VerifyResult(e.Result, jwks, receipts.VerifyOptions{Archival: true}); err != nil {
		return err
	}
	var res struct {
		Decision string `json:"decision"`
		Receipt  struct {
			ID          string `json:"id"`
			InputSHA256 string `json:"input_sha256"`
		} `json:"receipt"`
	}
	if err := json.Unmarshal(e.Result, &res); err != nil {
		return err
	}
	sum := sha256.Sum256(e.Input)
	switch {
	case hex.EncodeToString(sum[:]) != res.Receipt.InputSHA256:
		return errors.New("the recorded input is not the one the receipt signed (input_sha256 differs)")
	case res.Decision != e.Decision:
		return fmt.Errorf("the line says %q, the signed result %q", e.Decision, res.Decision)
	case res.Receipt.ID != e.ReceiptID:
		return errors.New("the line's receipt_id is not the signed one")
	}
	return nil
}

// VerifyJournal verifies every line of a journal file; it returns the number of lines verified and the
// failures, each naming its line.
func VerifyJournal(r io.Reader, jwks []byte) (ok int, failures []error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 4<<20)
	for n := 1; sc.Scan(); n++ {
		var e JournalEntry
		err := json.Unmarshal(sc.Bytes(), &e)
		if err == nil {
			err = VerifyJournalEntry(e, jwks)
		}
		if err != nil {
			failures = append(failures, fmt.Errorf("line %d: %w", n, err))
			continue
		}
		ok++
	}
	if err := sc.Err(); err != nil {
		failures = append(failures, err)
	}
	return ok, failures
}
