package svm_test

import (
	"bytes"
	"github.com/payguard/payguard/x402/svm"
	"github.com/payguard/payguard/x402/svm/svmtest"
	"testing"
)

// FuzzDecode: no input panics or reads past its end; whatever decodes without lookup tables encodes back to
// exactly its input (one transaction, one spelling: the replay key is the message bytes); svm.CheckExact never
// panics on a decoded transaction, and never accepts one whose transfer differs from the terms.
func FuzzDecode(f *testing.F) {
	cases := svmtest.Cases(f)
	for _, c := range cases {
		f.Add(c.Raw)
	}
	f.Add([]byte{})
	f.Add([]byte{0x80, 0x00})
	f.Add([]byte{1})
	terms := cases[0].Terms
	f.Fuzz(func(t *testing.T, raw []byte) {
		tx, err := svm.Decode(raw)
		if err != nil {
			return
		}
		if tx.LookupTables == 0 && !bytes.Equal(svmtest.Encode(tx), raw) {
			t.Fatalf("%x decodes but encodes to %x", raw, svmtest.Encode(tx))
		}
		p, err := svm.CheckExact(tx, terms)
		if err != nil {
			return
		}
		ata, _ := svm.AssociatedTokenAddress(terms.PayTo, terms.Mint, p.TokenProgram)
		if p.Amount != terms.Amount || p.Destination != ata || tx.Keys[0] != terms.FeePayer {
			t.Fatalf("accepted a transfer of %d to %s", p.Amount, p.Destination)
		}
	})
}

// FuzzParseKey: a key that parses is the one canonical spelling of its bytes.
func FuzzParseKey(f *testing.F) {
	for _, s := range []string{"11111111111111111111111111111111", "4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU", "1", "z", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		k, err := svm.ParseKey(s)
		if err != nil {
			return
		}
		if k.String() != s {
			t.Fatalf("ParseKey(%q) = %s", s, k)
		}
	})
}
