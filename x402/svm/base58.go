package svm

import (
	"errors"
	"fmt"
)

// alphabet is Bitcoin's Base58 alphabet, which Solana uses for keys and signatures.
const alphabet = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"

// digit maps an alphabet byte to its value, or -1.
var digit = func() [256]int8 {
	var d [256]int8
	for i := range d {
		d[i] = -1
	}
	for i := 0; i < len(alphabet); i++ {
		d[alphabet[i]] = int8(i)
	}
	return d
}()

// maxKeyText is the longest Base58 text of 32 bytes (44 characters); anything longer is refused before any
// arithmetic, so a hostile string costs nothing.
const maxKeyText = 44

// Encode returns the Base58 text of b: one '1' per leading zero byte, then the number in base 58.
func Encode(b []byte) string {
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
		out = append(out, '1')
	}
	for i := len(digits) - 1; i >= 0; i-- {
		out = append(out, alphabet[digits[i]])
	}
	return string(out)
}

// decode returns the bytes s encodes, at most max of them.
func decode(s string, max int) ([]byte, error) {
	if s == "" {
		return nil, errors.New("empty base58 text")
	}
	zeros := 0
	for zeros < len(s) && s[zeros] == '1' {
		zeros++
	}
	num := make([]byte, 0, max) // little-endian base-256 bytes of the number
	for i := zeros; i < len(s); i++ {
		d := digit[s[i]]
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
