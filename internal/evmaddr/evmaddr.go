// Package evmaddr is the one test and the one canonical form of an EVM address (issue 33: there were five
// copies). An EVM address is 20 bytes written as 40 hex digits after "0x"; letter case carries only the
// EIP-55 checksum, so two spellings that differ in case name the same account.
//
// Two tests, for two questions:
//   - Is: does s name an EVM account at all? "0x" or "0X" then 40 hex digits. Everything that compares or
//     looks up addresses (payee lists, sanctions, screening, the server's config) uses it, so that a seller
//     who writes "0X" does not slip past a list written with "0x".
//   - IsWire: is s an EVM address as x402 writes it? "0x" (lower-case x) then 40 hex digits, the official
//     SDKs' /^0x[a-fA-F0-9]{40}$/. Package x402 checks the wire with it (x402.IsEVMAddress).
//
// It is a leaf: policy and screening use it without importing the wire package.
package evmaddr

import "strings"

// Is reports whether s is "0x" or "0X" followed by 40 hex digits (any letter case).
func Is(s string) bool {
	return len(s) == 42 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') && hex40(s[2:])
}

// IsWire reports whether s is "0x" followed by 40 hex digits (any letter case): x402's form.
func IsWire(s string) bool {
	return len(s) == 42 && s[0] == '0' && s[1] == 'x' && hex40(s[2:])
}

// Canonical is the form addresses are compared and keyed in: an address Is accepts in lower case ("0x" and
// lower-case digits), anything else unchanged.
func Canonical(s string) string {
	if Is(s) {
		return strings.ToLower(s)
	}
	return s
}

// CanonicalKey is Canonical(s) for an s that Is, written into an array the caller keeps (on its stack):
// a map keyed by canonical addresses is looked up with m[string(key[:])] without allocating (the proxy
// screens and list-checks the payee of every decision). For an s that Is not, the key is meaningless.
func CanonicalKey(s string) (key [42]byte) {
	for i := 0; i < len(key) && i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		key[i] = c
	}
	return key
}

// EqualLower reports whether canon == strings.ToLower(s) for an ASCII s (so canon == Canonical(s) for an
// s that Is), without writing the lower-case form.
func EqualLower(canon, s string) bool {
	if len(canon) != len(s) {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if canon[i] != c {
			return false
		}
	}
	return true
}

// Same reports whether a and b name the same payee: case-insensitively when both are EVM addresses (Is),
// exactly otherwise (other formats, base58 among them, are case-sensitive).
func Same(a, b string) bool {
	if Is(a) && Is(b) {
		return strings.EqualFold(a, b)
	}
	return a == b
}

func hex40(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}
