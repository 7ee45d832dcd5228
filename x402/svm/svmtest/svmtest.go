// Package svmtest holds what tests of Solana payments share: payments built by the official @x402/svm
// client and ATA vectors from @solana/kit (official.json, written by interop/tools/svm-fixtures.mjs), the
// interop buyer's key, and a wire encoder to change a transaction and sign it again.
package svmtest

import (
	"crypto/ed25519"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"strconv"
	"testing"

	"github.com/payguard/payguard/x402/svm"
)

//go:embed official.json
var officialJSON []byte

// Official is official.json.
type Official struct {
	Payments []Payment `json:"payments"`
	ATAs     []struct {
		Owner, Mint, Program, ATA string
	} `json:"atas"`
}

// Payment is one payment the official client built, with the requirement it answers.
type Payment struct {
	Name        string          `json:"name"`
	Requirement json.RawMessage `json:"requirement"` // a v2 accepts[] entry
	Transaction string          `json:"transaction"` // payload.transaction
	Want        struct {
		Payer, Destination, TokenProgram string
	} `json:"want"`
}

// Case is a Payment decoded: its wire bytes, the transaction and the terms of its requirement.
type Case struct {
	Payment
	Raw   []byte
	Tx    *svm.Transaction
	Terms svm.Terms
}

// Load reads official.json.
func Load(t testing.TB) Official {
	t.Helper()
	var o Official
	if err := json.Unmarshal(officialJSON, &o); err != nil {
		t.Fatal(err)
	}
	if len(o.Payments) == 0 || len(o.ATAs) == 0 {
		t.Fatal("official.json holds no payments or ATA vectors")
	}
	return o
}

// Cases decodes every official payment.
func Cases(t testing.TB) []Case {
	t.Helper()
	var out []Case
	for _, p := range Load(t).Payments {
		raw, err := base64.StdEncoding.DecodeString(p.Transaction)
		if err != nil {
			t.Fatal(err)
		}
		tx, err := svm.Decode(raw)
		if err != nil {
			t.Fatalf("%s: %v", p.Name, err)
		}
		var r struct {
			Amount, Asset, PayTo string
			Extra                struct {
				FeePayer string  `json:"feePayer"`
				Memo     *string `json:"memo"`
			}
		}
		if err := json.Unmarshal(p.Requirement, &r); err != nil {
			t.Fatal(err)
		}
		terms := svm.Terms{PayTo: Key(t, r.PayTo), Mint: Key(t, r.Asset), FeePayer: Key(t, r.Extra.FeePayer)}
		if terms.Amount, err = strconv.ParseUint(r.Amount, 10, 64); err != nil {
			t.Fatal(err)
		}
		if r.Extra.Memo != nil {
			terms.Memo, terms.HasMemo = *r.Extra.Memo, true
		}
		out = append(out, Case{Payment: p, Raw: raw, Tx: tx, Terms: terms})
	}
	return out
}

// Key parses an address or fails the test.
func Key(t testing.TB, s string) svm.Key {
	t.Helper()
	k, err := svm.ParseKey(s)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// BuyerKey is the interop buyer's key: the seed interop/lib/solana.mjs derives for "buyer".
func BuyerKey() ed25519.PrivateKey {
	seed := sha256.Sum256([]byte("payguard-interop-solana:buyer"))
	return ed25519.NewKeyFromSeed(seed[:])
}

// Encode writes tx in wire form (address lookup tables are not written: tests do not build them).
func Encode(tx *svm.Transaction) []byte {
	var m []byte
	if tx.Version == 0 {
		m = append(m, 0x80)
	}
	m = append(m, byte(tx.Header.RequiredSignatures), byte(tx.Header.ReadonlySigned), byte(tx.Header.ReadonlyUnsigned))
	m = compactU16(m, len(tx.Keys))
	for _, k := range tx.Keys {
		m = append(m, k[:]...)
	}
	m = append(m, tx.Blockhash[:]...)
	m = compactU16(m, len(tx.Instructions))
	for _, in := range tx.Instructions {
		m = append(m, byte(in.ProgramIndex))
		m = compactU16(m, len(in.Accounts))
		for _, a := range in.Accounts {
			m = append(m, byte(a))
		}
		m = compactU16(m, len(in.Data))
		m = append(m, in.Data...)
	}
	if tx.Version == 0 {
		m = compactU16(m, 0)
	}
	out := compactU16(nil, len(tx.Signatures))
	for _, s := range tx.Signatures {
		out = append(out, s[:]...)
	}
	return append(out, m...)
}

func compactU16(b []byte, n int) []byte {
	for {
		c := byte(n & 0x7f)
		n >>= 7
		if n == 0 {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

// Resign encodes tx, signs its message with the buyer's key in the buyer's signature slot, and returns the
// wire bytes and the decoded result.
func Resign(t testing.TB, tx *svm.Transaction) ([]byte, *svm.Transaction) {
	t.Helper()
	key := BuyerKey()
	var pub svm.Key
	copy(pub[:], key.Public().(ed25519.PublicKey))
	raw := Encode(tx)
	out, err := svm.Decode(raw)
	if err != nil {
		t.Fatalf("changed transaction does not decode: %v", err)
	}
	sig := ed25519.Sign(key, out.Message)
	for i, k := range out.Keys[:out.Header.RequiredSignatures] {
		if k == pub {
			copy(raw[1+64*i:], sig) // after a one-byte signature count
		}
	}
	if out, err = svm.Decode(raw); err != nil {
		t.Fatal(err)
	}
	return raw, out
}

// LE64 is v in little-endian bytes (SPL amounts, compute prices).
func LE64(v uint64) []byte { return binary.LittleEndian.AppendUint64(nil, v) }
