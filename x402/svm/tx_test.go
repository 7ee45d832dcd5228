package svm_test

import (
	"bytes"
	"github.com/payguard/payguard/x402/svm"
	"github.com/payguard/payguard/x402/svm/svmtest"
	"strings"
	"testing"
)

func TestDecodeRefusesMalformedTransactions(t *testing.T) {
	official := svmtest.Cases(t)[0].Raw
	// msg is the offset of the message in the official transaction (1 count byte, 2 signatures).
	const msg = 1 + 2*64
	edit := func(f func(b []byte) []byte) []byte { return f(bytes.Clone(official)) }
	cases := []struct {
		name, reason string
		raw          []byte
	}{
		{"empty", "needs 1 more bytes", nil},
		{"larger than a packet", "more than Solana's 1232", make([]byte, svm.MaxTransactionSize+1)},
		{"a byte after the message", "1 bytes after its message", append(bytes.Clone(official), 0)},
		{"truncated", "needs", official[:len(official)-1]},
		{"count in a longer form than needed", "shortest form", append([]byte{0x82, 0x00}, official[1:]...)},
		{"count past 16 bits", "overflows 16 bits", []byte{0xff, 0xff, 0x04}},
		{"more signatures than bytes", "do not fit", []byte{0x7f, 0}},
		{"one signature fewer than required", "carries 1 signatures, its message requires 2",
			append([]byte{1}, official[1+64:]...)},
		{"message version 1", "version 1 is not one Solana defines", edit(func(b []byte) []byte { b[msg] = 0x81; return b })},
		{"no required signature", "requires no signature", edit(func(b []byte) []byte { b[msg+1] = 0; return b })},
		{"read-only fee payer", "fee payer read-only", edit(func(b []byte) []byte { b[msg+2] = 2; return b })},
		{"every key read-only", "unsigned keys read-only", edit(func(b []byte) []byte { b[msg+3] = 200; return b })},
		{"a key listed twice", "listed twice", edit(func(b []byte) []byte { copy(b[msg+5+32:], b[msg+5:msg+5+32]); return b })},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := svm.Decode(c.raw)
			if err == nil || !strings.Contains(err.Error(), c.reason) {
				t.Fatalf("Decode = %v; want an error containing %q", err, c.reason)
			}
		})
	}
}

// An instruction's indexes must point at keys, and a program must be a static key other than the fee payer.
func TestDecodeChecksInstructionIndexes(t *testing.T) {
	c := svmtest.Cases(t)[0]
	for _, tc := range []struct {
		name, reason string
		change       func(*svm.Transaction)
	}{
		{"program index past the keys", "program index", func(tx *svm.Transaction) { tx.Instructions[0].ProgramIndex = len(tx.Keys) }},
		{"the fee payer as a program", "invokes the fee payer", func(tx *svm.Transaction) { tx.Instructions[0].ProgramIndex = 0 }},
		{"account index past the keys", "account index", func(tx *svm.Transaction) { tx.Instructions[2].Accounts[0] = len(tx.Keys) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tx, _ := svm.Decode(bytes.Clone(c.Raw))
			tc.change(tx)
			if _, err := svm.Decode(svmtest.Encode(tx)); err == nil || !strings.Contains(err.Error(), tc.reason) {
				t.Fatalf("Decode = %v; want %q", err, tc.reason)
			}
		})
	}
}

// A v0 transaction that loads accounts from a lookup table decodes (its indexes may point past the static
// keys) but is never a payment payguard can check.
func TestLookupTablesAreRefused(t *testing.T) {
	c := svmtest.Cases(t)[0]
	raw := bytes.Clone(c.Raw)
	raw = raw[:len(raw)-1] // the empty lookup-table list
	raw = append(raw, 1)   // one table
	raw = append(raw, c.Terms.PayTo[:]...)
	raw = append(raw, 1, 0, 0) // one writable index, no read-only one
	tx, err := svm.Decode(raw)
	if err != nil {
		t.Fatal(err)
	}
	if tx.LookupTables != 1 {
		t.Fatalf("LookupTables = %d", tx.LookupTables)
	}
	if _, err := svm.CheckExact(tx, c.Terms); err == nil || !strings.Contains(err.Error(), "address lookup tables") {
		t.Fatalf("CheckExact = %v", err)
	}
}

func TestDecodeRoundTripsOfficialTransactions(t *testing.T) {
	for _, c := range svmtest.Cases(t) {
		if got := svmtest.Encode(c.Tx); !bytes.Equal(got, c.Raw) {
			t.Errorf("%s: decode then encode changed the transaction", c.Name)
		}
	}
}

func TestBase58Keys(t *testing.T) {
	if got := (svm.Key{}).String(); got != "11111111111111111111111111111111" {
		t.Errorf("zero key = %s", got)
	}
	if k := svmtest.Key(t, "ComputeBudget111111111111111111111111111111"); k.String() != "ComputeBudget111111111111111111111111111111" {
		t.Errorf("round trip = %s", k)
	}
	for _, bad := range []string{
		"", "0zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU", "OzMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU",
		"IzMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU", "lzMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU",
		"4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERY",            // 25 bytes
		"14zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU", // a leading zero byte more: 33 bytes
		"0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
		strings.Repeat("z", 45), strings.Repeat("z", 44), // too long; 44 z's exceed 2^256
		" 4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU",
	} {
		if k, err := svm.ParseKey(bad); err == nil {
			t.Errorf("ParseKey(%q) = %s, want an error", bad, k)
		}
	}
}
