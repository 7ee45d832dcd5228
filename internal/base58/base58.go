// Package base58 is the one Base58 codec (issue 33: screening, sanctions and x402/svm each had one): the
// text form of Solana keys and signatures, and, with a 4-byte double-SHA-256 checksum (Base58Check), of
// the legacy addresses of Bitcoin and its kin and of the XRP Ledger (in XRP's own alphabet).
//
// Decoding is bounded by the caller's maximum byte count before any arithmetic grows, so a hostile string
// costs little.
package base58

import (
	"crypto/sha256"
	"errors"
	"fmt"
)

// Alphabet is a Base58 alphabet: 58 distinct characters, the first standing for a leading zero byte.
type Alphabet struct {
	chars string
	digit [256]int8
}

// NewAlphabet makes an alphabet of 58 distinct ASCII characters.
func NewAlphabet(chars string) *Alphabet {
	a := &Alphabet{chars: chars}
	for i := range a.digit {
		a.digit[i] = -1
	}
	for i := 0; i < len(chars); i++ {
		a.digit[chars[i]] = int8(i)
	}
	return a
}

// Bitcoin is Bitcoin's alphabet, which Solana uses too; XRP is the XRP Ledger's.
var (
	Bitcoin = NewAlphabet("123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz")
	XRP     = NewAlphabet("rpshnaf39wBUDNEGHJKLM4PQRST7VWXYZ2bcdeCg65jkm8oFqi1tuvAxyz")
)

// Contains reports whether every byte of s is in the alphabet.
func (a *Alphabet) Contains(s string) bool {
	for i := 0; i < len(s); i++ {
		if a.digit[s[i]] < 0 {
			return false
		}
	}
	return true
}

// Encode returns the Base58 text of b: one zero character per leading zero byte, then the number in base 58.
func (a *Alphabet) Encode(b []byte) string {
	zeros := 0
	for zeros < len(b) && b[zeros] == 0 {
		zeros++
	}
	// log(256)/log(58) < 1.37: the number needs at most that many digits per byte.
	out := make([]byte, 0, zeros+len(b)*137/100+1)
	digits := make([]byte, 0, len(b)*137/100+1) // little-endian base-58 digits
	for _, c := range b[zeros:] {
		carry := int(c)
		for i := range digits {
			carry += int(digits[i]) << 8
			digits[i] = byte(carry % 58)
			carry /= 58
		}
		for carry > 0 {
			digits = append(digits, byte(carry%58))
			carry /= 58
		}
	}
	for range zeros {
		out = append(out, a.chars[0])
	}
	for i := len(digits) - 1; i >= 0; i-- {
		out = append(out, a.chars[digits[i]])
	}
	return string(out)
}

// Decode returns the bytes s encodes, refusing text that encodes more than max bytes.
func (a *Alphabet) Decode(s string, max int) ([]byte, error) {
	if s == "" {
		return nil, errors.New("empty base58 text")
	}
	zeros := 0
	for zeros < len(s) && s[zeros] == a.chars[0] {
		zeros++
	}
	num := make([]byte, 0, max) // little-endian base-256 bytes of the number
	for i := zeros; i < len(s); i++ {
		d := a.digit[s[i]]
		if d < 0 {
			return nil, fmt.Errorf("%q is not a base58 character", s[i])
		}
		carry := int(d)
		for j := range num {
			carry += int(num[j]) * 58
			num[j] = byte(carry)
			carry >>= 8
		}
		for carry > 0 {
			num = append(num, byte(carry))
			carry >>= 8
		}
		if zeros+len(num) > max {
			return nil, fmt.Errorf("base58 text encodes more than %d bytes", max)
		}
	}
	out := make([]byte, zeros+len(num))
	for i, c := range num {
		out[len(out)-1-i] = c
	}
	return out, nil
}

// CheckValid reports whether s (26 to 40 characters, the length of the addresses that use it) is
// Base58Check: a payload and the first 4 bytes of its double SHA-256.
func (a *Alphabet) CheckValid(s string) bool {
	if len(s) < 26 || len(s) > 40 {
		return false
	}
	b, err := a.Decode(s, len(s)) // never more bytes than characters
	if err != nil || len(b) < 5 {
		return false
	}
	payload, sum := b[:len(b)-4], b[len(b)-4:]
	h1 := sha256.Sum256(payload)
	h2 := sha256.Sum256(h1[:])
	return string(h2[:4]) == string(sum)
}
