package screening

import (
	"strings"
	"unicode"

	"github.com/payguard/payguard/internal/base58"
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
	case base58.Bitcoin.CheckValid(s):
		return AddressBase58Check
	case strings.HasPrefix(s, "r") && base58.XRP.CheckValid(s):
		return AddressXRP
	case (len(s) == 95 || len(s) == 106) && (s[0] == '4' || s[0] == '8') && base58.Bitcoin.Contains(s):
		return AddressMonero
	case len(s) >= 32 && len(s) <= 44 && isKey32(s):
		return AddressSolana
	}
	return ""
}

const (
	bech32Charset = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"
)

func inAlphabet(s, alphabet string) bool {
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(alphabet, s[i]) < 0 {
			return false
		}
	}
	return true
}

// isKey32 reports whether s is the Base58 text of exactly 32 bytes (a Solana key).
func isKey32(s string) bool {
	b, err := base58.Bitcoin.Decode(s, 32)
	return err == nil && len(b) == 32
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
