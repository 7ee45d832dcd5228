package svm

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"os"
	"strconv"
	"testing"
)

// official is testdata/official.json: payments built by the official @x402/svm client and ATA vectors
// derived with @solana/kit (interop/tools/svm-fixtures.mjs wrote it).
type official struct {
	Payments []struct {
		Name        string `json:"name"`
		Requirement struct {
			Network string `json:"network"`
			Amount  string `json:"amount"`
			Asset   string `json:"asset"`
			PayTo   string `json:"payTo"`
			Extra   struct {
				FeePayer string  `json:"feePayer"`
				Memo     *string `json:"memo"`
			} `json:"extra"`
		} `json:"requirement"`
		Transaction string `json:"transaction"`
		Want        struct {
			Payer, Destination, TokenProgram string
		} `json:"want"`
	} `json:"payments"`
	ATAs []struct{ Owner, Mint, Program, ATA string } `json:"atas"`
}

func loadOfficial(t testing.TB) official {
	t.Helper()
	b, err := os.ReadFile("testdata/official.json")
	if err != nil {
		t.Fatal(err)
	}
	var o official
	if err := json.Unmarshal(b, &o); err != nil {
		t.Fatal(err)
	}
	if len(o.Payments) == 0 || len(o.ATAs) == 0 {
		t.Fatal("testdata/official.json holds no payments or ATA vectors")
	}
	return o
}

// officialCase is one fixture payment decoded, with its terms.
type officialCase struct {
	name  string
	raw   []byte
	tx    *Transaction
	terms Terms
}

func officialCases(t testing.TB) []officialCase {
	t.Helper()
	var out []officialCase
	for _, p := range loadOfficial(t).Payments {
		raw, err := base64.StdEncoding.DecodeString(p.Transaction)
		if err != nil {
			t.Fatal(err)
		}
		tx, err := Decode(raw)
		if err != nil {
			t.Fatalf("%s: %v", p.Name, err)
		}
		r := p.Requirement
		terms := Terms{PayTo: testKey(t, r.PayTo), Mint: testKey(t, r.Asset), FeePayer: testKey(t, r.Extra.FeePayer)}
		if terms.Amount, err = strconv.ParseUint(r.Amount, 10, 64); err != nil {
			t.Fatal(err)
		}
		if r.Extra.Memo != nil {
			terms.Memo, terms.HasMemo = *r.Extra.Memo, true
		}
		out = append(out, officialCase{name: p.Name, raw: raw, tx: tx, terms: terms})
	}
	return out
}

func testKey(t testing.TB, s string) Key {
	t.Helper()
	k, err := ParseKey(s)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// buyerKey is the interop buyer's key: the seed interop/lib/solana.mjs derives for "buyer".
func buyerKey() ed25519.PrivateKey {
	seed := sha256.Sum256([]byte("payguard-interop-solana:buyer"))
	return ed25519.NewKeyFromSeed(seed[:])
}

// encode writes tx back in wire form (no address lookup tables), for tests that change a transaction.
func encode(tx *Transaction) []byte {
	cu16 := func(b []byte, n int) []byte {
		for {
			c := byte(n & 0x7f)
			n >>= 7
			if n == 0 {
				return append(b, c)
			}
			b = append(b, c|0x80)
		}
	}
	var m []byte
	if tx.Version == 0 {
		m = append(m, 0x80)
	}
	m = append(m, byte(tx.Header.RequiredSignatures), byte(tx.Header.ReadonlySigned), byte(tx.Header.ReadonlyUnsigned))
	m = cu16(m, len(tx.Keys))
	for _, k := range tx.Keys {
		m = append(m, k[:]...)
	}
	m = append(m, tx.Blockhash[:]...)
	m = cu16(m, len(tx.Instructions))
	for _, in := range tx.Instructions {
		m = append(m, byte(in.ProgramIndex))
		m = cu16(m, len(in.Accounts))
		for _, a := range in.Accounts {
			m = append(m, byte(a))
		}
		m = cu16(m, len(in.Data))
		m = append(m, in.Data...)
	}
	if tx.Version == 0 {
		m = cu16(m, 0)
	}
	out := cu16(nil, len(tx.Signatures))
	for _, s := range tx.Signatures {
		out = append(out, s[:]...)
	}
	return append(out, m...)
}

// resign re-encodes tx, signs the message with the buyer's key in the buyer's slot, and decodes the result.
func resign(t testing.TB, tx *Transaction) *Transaction {
	t.Helper()
	key := buyerKey()
	var pub Key
	copy(pub[:], key.Public().(ed25519.PublicKey))
	raw := encode(tx)
	out, err := Decode(raw)
	if err != nil {
		t.Fatalf("re-encoded transaction does not decode: %v", err)
	}
	sig := ed25519.Sign(key, out.Message)
	for i, k := range out.Keys[:out.Header.RequiredSignatures] {
		if k == pub {
			copy(out.Signatures[i][:], sig)
			copy(raw[1+64*i:], sig) // one compact-u16 byte of count (fewer than 128 signatures)
		}
	}
	out, err = Decode(raw)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func le64(v uint64) []byte { return binary.LittleEndian.AppendUint64(nil, v) }
