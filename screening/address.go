package screening

import (
	"crypto/sha256"
	"math/big"
	"strings"
	"unicode"

	"github.com/payguard/payguard/internal/evmaddr"
	"golang.org/x/text/unicode/norm"
)

// FlagUnrecognizedAddress: the address given is not a wallet address of any format payguard recognizes, so
// "not on the list" says nothing about it (risk unknown, never low).
const FlagUnrecognizedAddress = "unrecognized_address"

// NormalizeAddress undoes the spellings under which a listed wallet address would otherwise slip past an
// exact lookup: compatibility forms are folded (NFKC: fullwidth "０ｘ" and digits become "0x" and ASCII
// digits), format characters (zero-width spaces and joiners, BOM, soft hyphen, bidi controls) and white
// space are removed wherever they are, since no address format contains them, and forty hex digits written
// without "0x" get it. Letter case is left to the lookup, which folds it only where the format does
// (sanctions.addressKey).
func NormalizeAddress(s string) string {
	if isPlainASCII(s) {
		s = strings.TrimSpace(s)
	} else {
		s = strings.Map(func(r rune) rune {
			if unicode.IsSpace(r) || unicode.Is(unicode.Cf, r) {
				return -1
			}
			return r
		}, norm.NFKC.String(s))
	}
	if len(s) == 40 && isHex(s) {
		return "0x" + s
	}
	return s
}

// isPlainASCII reports printable ASCII without interior white space: the common case, which needs nothing
// but trimming.
func isPlainASCII(s string) bool {
	t := strings.TrimSpace(s)
	for i := 0; i < len(t); i++ {
		if t[i] <= ' ' || t[i] >= 0x7f {
			return false
		}
	}
	return true
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// Address formats AddressKind recognizes.
const (
	AddressEVM         = "evm"         // 0x and 40 hex digits (Ethereum, Base and every EVM chain)
	AddressBech32      = "bech32"      // BIP-173/350 with a valid checksum (bc1..., ltc1..., zs1...)
	AddressCashAddr    = "cashaddr"    // Bitcoin Cash q.../p..., with or without "bitcoincash:"
	AddressBase58Check = "base58check" // Base58 with a valid double-SHA-256 checksum (BTC legacy, LTC, TRX, DASH, ZEC t-addr, ...)
	AddressXRP         = "xrp"         // Base58Check in the XRP Ledger alphabet (r...)
	AddressSolana      = "solana"      // Base58 of a 32-byte key
	AddressMonero      = "monero"      // 95 or 106 Base58 characters starting with 4 or 8
)

// AddressKind names the format of a normalized address, or "" when it is none payguard recognizes. The
// formats cover the chains x402 pays on (EVM, Solana) and those whose addresses the SDN list names.
func AddressKind(s string) string {
	switch {
	case evmaddr.Is(s):
		return AddressEVM
	case isCashAddr(s):
		return AddressCashAddr
	case bech32Valid(s):
		return AddressBech32
	case base58CheckValid(s, base58Alphabet):
		return AddressBase58Check
	case strings.HasPrefix(s, "r") && base58CheckValid(s, xrpAlphabet):
		return AddressXRP
	case (len(s) == 95 || len(s) == 106) && (s[0] == '4' || s[0] == '8') && inAlphabet(s, base58Alphabet):
		return AddressMonero
	case len(s) >= 32 && len(s) <= 44 && len(base58Decode(s, base58Alphabet)) == 32:
		return AddressSolana
	}
	return ""
}

const (
	base58Alphabet = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
	xrpAlphabet    = "rpshnaf39wBUDNEGHJKLM4PQRST7VWXYZ2bcdeCg65jkm8oFqi1tuvAxyz"
	bech32Charset  = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"
)

func inAlphabet(s, alphabet string) bool {
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(alphabet, s[i]) < 0 {
			return false
		}
	}
	return true
}

// base58Decode returns the bytes s encodes (leading zero bytes for leading first-alphabet characters), or
// nil when s is not in the alphabet or too long to be an address.
func base58Decode(s, alphabet string) []byte {
	if s == "" || len(s) > 128 {
		return nil
	}
	n := new(big.Int)
	radix := big.NewInt(58)
	for i := 0; i < len(s); i++ {
		d := strings.IndexByte(alphabet, s[i])
		if d < 0 {
			return nil
		}
		n.Mul(n, radix)
		n.Add(n, big.NewInt(int64(d)))
	}
	b := n.Bytes()
	for i := 0; i < len(s) && s[i] == alphabet[0]; i++ {
		b = append([]byte{0}, b...)
	}
	return b
}

// base58CheckValid reports whether s (26 to 40 characters) decodes with a valid 4-byte checksum.
func base58CheckValid(s, alphabet string) bool {
	if len(s) < 26 || len(s) > 40 {
		return false
	}
	b := base58Decode(s, alphabet)
	if len(b) < 5 {
		return false
	}
	payload, sum := b[:len(b)-4], b[len(b)-4:]
	h1 := sha256.Sum256(payload)
	h2 := sha256.Sum256(h1[:])
	return string(h2[:4]) == string(sum)
}

// isCashAddr reports a Bitcoin Cash address in one letter case: q or p and 41 more charset characters.
func isCashAddr(s string) bool {
	l := strings.ToLower(s)
	if s != l && s != strings.ToUpper(s) {
		return false
	}
	l = strings.TrimPrefix(l, "bitcoincash:")
	return len(l) == 42 && (l[0] == 'q' || l[0] == 'p') && inAlphabet(l, bech32Charset)
}

// bech32Valid reports a BIP-173 (bech32) or BIP-350 (bech32m) string with a valid checksum, in one letter
// case.
func bech32Valid(s string) bool {
	l := strings.ToLower(s)
	if (s != l && s != strings.ToUpper(s)) || len(l) > 90 {
		return false
	}
	sep := strings.LastIndexByte(l, '1')
	if sep < 1 || len(l)-sep-1 < 6 {
		return false
	}
	hrp, data := l[:sep], l[sep+1:]
	for i := 0; i < len(hrp); i++ {
		if hrp[i] < 33 || hrp[i] > 126 {
			return false
		}
	}
	values := make([]int, 0, 2*len(hrp)+1+len(data))
	for i := 0; i < len(hrp); i++ {
		values = append(values, int(hrp[i])>>5)
	}
	values = append(values, 0)
	for i := 0; i < len(hrp); i++ {
		values = append(values, int(hrp[i])&31)
	}
	for i := 0; i < len(data); i++ {
		d := strings.IndexByte(bech32Charset, data[i])
		if d < 0 {
			return false
		}
		values = append(values, d)
	}
	p := bech32Polymod(values)
	return p == 1 || p == 0x2bc830a3 // bech32, bech32m
}

func bech32Polymod(values []int) int {
	gen := [5]int{0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3}
	chk := 1
	for _, v := range values {
		top := chk >> 25
		chk = (chk&0x1ffffff)<<5 ^ v
		for i := range 5 {
			if (top>>i)&1 == 1 {
				chk ^= gen[i]
			}
		}
	}
	return chk
}
