package svm

import (
	"fmt"

	"github.com/payguard/payguard/internal/base58"
)

// maxKeyText is the longest Base58 text of 32 bytes (44 characters); anything longer is refused before any
// arithmetic, so a hostile string costs nothing.
const maxKeyText = 44

// Encode returns the Base58 text of b (Bitcoin's alphabet, which Solana uses for keys and signatures).
func Encode(b []byte) string { return base58.Bitcoin.Encode(b) }

// decode returns the bytes s encodes, at most max of them.
func decode(s string, max int) ([]byte, error) { return base58.Bitcoin.Decode(s, max) }

// ParseKey reads a Solana address (a 32-byte public key or program-derived address in Base58). The text must
// be the key's one canonical spelling: Base58 has no other spelling of the same bytes except with more or fewer
// leading '1's, which would decode to a different length, so exactly 32 bytes means canonical.
func ParseKey(s string) (Key, error) {
	var k Key
	if len(s) > maxKeyText {
		return k, fmt.Errorf("address %.48q is longer than %d characters", s, maxKeyText)
	}
	b, err := decode(s, len(k))
	if err != nil {
		return k, fmt.Errorf("address %q: %v", s, err)
	}
	if len(b) != len(k) {
		return k, fmt.Errorf("address %q is %d bytes, not %d", s, len(b), len(k))
	}
	copy(k[:], b)
	return k, nil
}

// mustKey parses a constant address.
func mustKey(s string) Key {
	k, err := ParseKey(s)
	if err != nil {
		panic(err)
	}
	return k
}
