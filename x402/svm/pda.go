package svm

import (
	"crypto/sha256"
	"errors"

	"filippo.io/edwards25519"
)

// Program addresses the exact scheme involves (the same on every cluster).
var (
	TokenProgram             = mustKey("TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA")
	Token2022Program         = mustKey("TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb")
	AssociatedTokenProgram   = mustKey("ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL")
	ComputeBudgetProgram     = mustKey("ComputeBudget111111111111111111111111111111")
	MemoProgram              = mustKey("MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr")
	LighthouseProgram        = mustKey("L2TExMFKdjpN9kozasaurPirfHy9P8sbXoAN1qA3S95")
	errNoProgramAddressFound = errors.New("no bump seed yields an address off the curve")
)

// onCurve reports whether k is the encoding of a point on ed25519, i.e. could have a private key. Solana's
// curve25519-dalek decompression accepts the same encodings as edwards25519's SetBytes (non-reduced field
// elements and a negative zero x included), so the two agree on which hashes are program addresses.
func onCurve(k Key) bool {
	_, err := new(edwards25519.Point).SetBytes(k[:])
	return err == nil
}

// FindProgramAddress derives a program-derived address as Solana's find_program_address does: the first bump
// seed from 255 down whose sha256(seeds ‖ bump ‖ program ‖ "ProgramDerivedAddress") is off the curve.
func FindProgramAddress(seeds [][]byte, program Key) (Key, uint8, error) {
	for bump := 255; bump >= 0; bump-- {
		h := sha256.New()
		for _, s := range seeds {
			h.Write(s)
		}
		h.Write([]byte{byte(bump)})
		h.Write(program[:])
		h.Write([]byte("ProgramDerivedAddress"))
		var k Key
		h.Sum(k[:0])
		if !onCurve(k) {
			return k, uint8(bump), nil
		}
	}
	return Key{}, 0, errNoProgramAddressFound
}

// AssociatedTokenAddress is the associated token account of owner for mint under a token program (Token or
// Token-2022): the program-derived address of [owner, token program, mint] under the Associated Token
// Account program, the account the official client pays into.
func AssociatedTokenAddress(owner, mint, tokenProgram Key) (Key, error) {
	k, _, err := FindProgramAddress([][]byte{owner[:], tokenProgram[:], mint[:]}, AssociatedTokenProgram)
	return k, err
}
