// Package svm reads the Solana (SVM) side of x402's "exact" scheme: the partially signed transaction a client
// sends as `payload.transaction` (docs/SPEC.md §11.9), decoded from Solana's wire format, and the checks that
// bind it to one payment requirement (CheckExact).
//
// The decoder is written here rather than taken from a Solana SDK: the one well-known Go library
// (github.com/gagliardetto/solana-go) brings some 25 modules (a Mongo driver, zap, a 2022 golang.org/x/crypto)
// for what is a few hundred bytes of a simple, fixed format, and a payment guard wants every byte of hostile
// input bounded and fuzzed in its own code. Only the curve test of a program-derived address comes from a
// library (filippo.io/edwards25519, the Go team's own implementation, which has no dependencies).
package svm

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Key is a 32-byte Solana public key (an account or program address).
type Key [32]byte

// String returns the key's Base58 text.
func (k Key) String() string { return Encode(k[:]) }

// MaxTransactionSize is Solana's packet size limit (PACKET_DATA_SIZE, 1232 bytes): a larger transaction can
// never be submitted, so it is refused before it is read.
const MaxTransactionSize = 1232

// Version of a message: Legacy, or 0 for a v0 message (the only versioned format Solana defines).
const Legacy = -1

// Header is a message's signer layout: the first RequiredSignatures account keys sign; of those, the last
// ReadonlySigned are read-only; of the unsigned keys, the last ReadonlyUnsigned are read-only.
type Header struct {
	RequiredSignatures, ReadonlySigned, ReadonlyUnsigned int
}

// Instruction is one compiled instruction: indexes into the account keys, and opaque data.
type Instruction struct {
	ProgramIndex int
	Accounts     []int
	Data         []byte
}

// Transaction is a decoded wire transaction.
type Transaction struct {
	Signatures   [][64]byte
	Message      []byte // the signed bytes: what every signature covers
	Version      int    // Legacy or 0
	Header       Header
	Keys         []Key // the static account keys; Keys[0] is the fee payer
	Blockhash    Key   // the recent blockhash: the transaction's lifetime
	Instructions []Instruction
	// LookupTables counts the v0 address-table lookups. Accounts they load live on chain, so a transaction
	// that has any cannot be read offline; Decode keeps the count and CheckExact refuses it.
	LookupTables int
}

// reader reads a byte slice front to back, failing (never panicking) at its end.
type reader struct {
	b   []byte
	off int
	err error
}

func (r *reader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("offset %d: %s", r.off, fmt.Sprintf(format, args...))
	}
}

func (r *reader) bytes(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || n > len(r.b)-r.off {
		r.fail("needs %d more bytes, has %d", n, len(r.b)-r.off)
		return nil
	}
	out := r.b[r.off : r.off+n]
	r.off += n
	return out
}

func (r *reader) byte() int {
	b := r.bytes(1)
	if b == nil {
		return 0
	}
	return int(b[0])
}

// compactU16 reads Solana's short_vec length: 7 bits per byte, low first, at most 3 bytes, value at most
// 0xffff, and in its shortest form (Solana refuses an alias such as 0x80 0x00 for 0, so must we: two
// spellings of one transaction would be two payments to a replay check keyed on bytes).
func (r *reader) compactU16() int {
	v := 0
	for i := 0; i < 3; i++ {
		b := r.byte()
		if r.err != nil {
			return 0
		}
		if i == 2 && b > 0x03 {
			r.fail("compact-u16 overflows 16 bits")
			return 0
		}
		v |= (b & 0x7f) << (7 * i)
		if b&0x80 == 0 {
			if i > 0 && b == 0 {
				r.fail("compact-u16 is not in its shortest form")
				return 0
			}
			return v
		}
	}
	r.fail("compact-u16 longer than 3 bytes")
	return 0
}

// count reads a compact-u16 count of items of size bytes each and checks that they fit in what is left, so
// that no allocation is larger than the input.
func (r *reader) count(size int, what string) int {
	n := r.compactU16()
	if r.err == nil && n*size > len(r.b)-r.off {
		r.fail("%d %s do not fit in the %d bytes left", n, what, len(r.b)-r.off)
		return 0
	}
	return n
}

// Decode reads a wire transaction: compact-u16 signature count and the signatures, then a legacy or v0
// message. Everything is checked that can be without the chain: the sizes, the header's consistency with the
// keys, every index in range, the signature count equal to the header's, and nothing after the message.
func Decode(b []byte) (*Transaction, error) {
	if len(b) > MaxTransactionSize {
		return nil, fmt.Errorf("transaction is %d bytes, more than Solana's %d", len(b), MaxTransactionSize)
	}
	r := &reader{b: b}
	tx := &Transaction{}
	nsig := r.count(64, "signatures")
	for range nsig {
		var s [64]byte
		copy(s[:], r.bytes(64))
		tx.Signatures = append(tx.Signatures, s)
	}
	if r.err != nil {
		return nil, fmt.Errorf("transaction signatures: %w", r.err)
	}
	msgStart := r.off
	if err := tx.decodeMessage(r); err != nil {
		return nil, fmt.Errorf("transaction message: %w", err)
	}
	if r.off != len(b) {
		return nil, fmt.Errorf("transaction has %d bytes after its message", len(b)-r.off)
	}
	tx.Message = b[msgStart:]
	if nsig != tx.Header.RequiredSignatures {
		return nil, fmt.Errorf("transaction carries %d signatures, its message requires %d", nsig, tx.Header.RequiredSignatures)
	}
	return tx, nil
}

func (tx *Transaction) decodeMessage(r *reader) error {
	first := r.byte()
	tx.Version = Legacy
	if first&0x80 != 0 {
		tx.Version = first & 0x7f
		if tx.Version != 0 {
			return fmt.Errorf("message version %d is not one Solana defines", tx.Version)
		}
		first = r.byte()
	}
	tx.Header = Header{RequiredSignatures: first, ReadonlySigned: r.byte(), ReadonlyUnsigned: r.byte()}
	nkeys := r.count(32, "account keys")
	for range nkeys {
		var k Key
		copy(k[:], r.bytes(32))
		tx.Keys = append(tx.Keys, k)
	}
	copy(tx.Blockhash[:], r.bytes(32))
	if r.err != nil {
		return r.err
	}
	seen := make(map[Key]bool, nkeys)
	for _, k := range tx.Keys {
		if seen[k] { // Solana's sanitizer refuses a key listed twice
			return fmt.Errorf("account key %s is listed twice", k)
		}
		seen[k] = true
	}
	h := tx.Header
	switch {
	case h.RequiredSignatures == 0:
		return errors.New("message requires no signature (it has no fee payer)")
	case h.RequiredSignatures > nkeys:
		return fmt.Errorf("message requires %d signatures of %d keys", h.RequiredSignatures, nkeys)
	case h.ReadonlySigned >= h.RequiredSignatures:
		return errors.New("message makes its fee payer read-only")
	case h.ReadonlyUnsigned > nkeys-h.RequiredSignatures:
		return fmt.Errorf("message marks %d of %d unsigned keys read-only", h.ReadonlyUnsigned, nkeys-h.RequiredSignatures)
	}
	ninst := r.count(2, "instructions") // at least a program index and an empty account list
	for i := range ninst {
		in := Instruction{ProgramIndex: r.byte()}
		nacc := r.count(1, "instruction accounts")
		for range nacc {
			in.Accounts = append(in.Accounts, r.byte())
		}
		in.Data = r.bytes(r.count(1, "instruction data bytes"))
		if r.err != nil {
			return fmt.Errorf("instruction %d: %w", i, r.err)
		}
		tx.Instructions = append(tx.Instructions, in)
	}
	loaded := 0
	if tx.Version == 0 {
		tx.LookupTables = r.count(34, "address table lookups")
		for i := 0; i < tx.LookupTables && r.err == nil; i++ {
			r.bytes(32)
			loaded += len(r.bytes(r.count(1, "writable lookup indexes")))
			loaded += len(r.bytes(r.count(1, "read-only lookup indexes")))
		}
	}
	if r.err != nil {
		return r.err
	}
	if nkeys+loaded > 256 {
		return fmt.Errorf("message names %d accounts, more than 256", nkeys+loaded)
	}
	for i, in := range tx.Instructions {
		if in.ProgramIndex >= nkeys {
			// Solana requires a program to be a static key.
			return fmt.Errorf("instruction %d: program index %d out of %d static keys", i, in.ProgramIndex, nkeys)
		}
		if in.ProgramIndex == 0 {
			return fmt.Errorf("instruction %d invokes the fee payer as a program", i)
		}
		for _, a := range in.Accounts {
			if a >= nkeys+loaded {
				return fmt.Errorf("instruction %d: account index %d out of %d accounts", i, a, nkeys+loaded)
			}
		}
	}
	return nil
}

// Signed reports whether key index i is a required signer of the message.
func (tx *Transaction) Signed(i int) bool { return i >= 0 && i < tx.Header.RequiredSignatures }

// u64 reads a little-endian uint64 from data at off, if it fits.
func u64(data []byte, off int) (uint64, bool) {
	if off < 0 || len(data)-off < 8 {
		return 0, false
	}
	return binary.LittleEndian.Uint64(data[off:]), true
}
