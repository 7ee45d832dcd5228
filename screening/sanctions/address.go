package sanctions

import (
	"regexp"
	"strings"

	"github.com/payguard/payguard/internal/base58"
	"github.com/payguard/payguard/internal/evmaddr"
	"github.com/payguard/payguard/screening"
)

// remarkCap is the length at which OFAC cuts the sdn.csv remarks field; the rest of a longer remark is in
// sdn_comments.csv.
const remarkCap = 1000

// digitalAddressRE finds "Digital Currency Address - CUR address" items in remarks. OFAC separates items
// with "; " and ends the remark with ".", neither of which can occur inside an address.
var digitalAddressRE = regexp.MustCompile(`Digital Currency Address - ([A-Za-z0-9]+) ([A-Za-z0-9]+)`)

// addressMatch is one address found in a remark, with its byte span in the remark.
type addressMatch struct {
	DigitalAddress
	start, end int
}

func findAddresses(remarks string) []addressMatch {
	var out []addressMatch
	for _, m := range digitalAddressRE.FindAllStringSubmatchIndex(remarks, -1) {
		out = append(out, addressMatch{
			DigitalAddress: DigitalAddress{Currency: strings.ToUpper(remarks[m[2]:m[3]]), Address: remarks[m[4]:m[5]]},
			start:          m[4], end: m[5],
		})
	}
	return out
}

// addressKey is the lookup key of an address, after screening.NormalizeAddress. EVM addresses are case-insensitive (EIP-55 mixed case is only
// a checksum). So are bech32 addresses (bc1..., ltc1..., zs1...) and Bitcoin Cash CashAddr (q.../p...,
// with or without "bitcoincash:"): BIP-173 and CashAddr define the all-upper-case form, used in QR codes, as
// the same address, so they are keyed in lower case without the prefix. Every other format (Base58 and the
// like) is case-sensitive and kept as is.
func addressKey(s string) string {
	s = screening.NormalizeAddress(s) // zero-width characters, fullwidth forms, a missing 0x
	if evmaddr.Is(s) {
		return evmaddr.Canonical(s)
	}
	if folded, ok := foldBech32(s); ok {
		return folded
	}
	return s
}

// bech32Charset is the data alphabet of bech32 and CashAddr.
const bech32Charset = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"

// foldBech32 returns the lower-case form of a bech32 or CashAddr address written in one letter case (a mixed
// case string is not one: BIP-173 makes it invalid, and a Base58 address is mixed case).
func foldBech32(s string) (string, bool) {
	l := strings.ToLower(s)
	if s != l && s != strings.ToUpper(s) {
		return "", false
	}
	if rest, ok := strings.CutPrefix(l, "bitcoincash:"); ok {
		l = rest
		if len(l) == 42 && (l[0] == 'q' || l[0] == 'p') && inAlphabet(l, bech32Charset) {
			return l, true
		}
		return "", false
	}
	if len(l) == 42 && (l[0] == 'q' || l[0] == 'p') && inAlphabet(l, bech32Charset) {
		return l, true // CashAddr without its prefix, as OFAC lists it
	}
	sep := strings.LastIndexByte(l, '1')
	if sep < 1 || len(l) > 90 || len(l)-sep-1 < 6 || !inAlphabet(l[:sep], "abcdefghijklmnopqrstuvwxyz") ||
		!inAlphabet(l[sep+1:], bech32Charset) {
		return "", false
	}
	return l, true
}

func inAlphabet(s, alphabet string) bool {
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(alphabet, s[i]) < 0 {
			return false
		}
	}
	return true
}

// base58Currencies use Base58Check addresses (version bytes, payload, 4-byte double-SHA-256 checksum) in
// their legacy form, which lets a join across files of different dates be verified.
var base58Currencies = map[string]bool{
	"XBT": true, "LTC": true, "BSV": true, "BCH": true, "DASH": true, "BTG": true, "XVG": true, "ZEC": true,
	"TRX": true, "USDT": true,
}

// looksBase58Check reports whether an address of a Base58Check currency is in that legacy form (as opposed
// to, say, a bech32 "bc1..." or a cashaddr "q..." address, which carry no checksum we verify here).
func looksBase58Check(currency, addr string) bool {
	if !base58Currencies[currency] || len(addr) < 26 || len(addr) > 40 {
		return false
	}
	if strings.HasPrefix(addr, "bc1") || strings.HasPrefix(addr, "ltc1") || strings.HasPrefix(addr, "0x") {
		return false
	}
	if currency == "BCH" && (addr[0] == 'q' || addr[0] == 'p') {
		return false
	}
	return base58.Bitcoin.Contains(addr)
}
