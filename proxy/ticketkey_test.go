package proxy

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"

	"github.com/payguard/payguard/x402"
)

// TestTicketKeyBytesUnchanged holds ticketKey to the key it wrote before it hashed one buffer (issue 36):
// the parts joined by NUL with strings.Join and the amount by fmt.Sprint. Keys live in stores across a
// restart or an upgrade, so a ticket minted by the earlier build must still be found.
func TestTicketKeyBytesUnchanged(t *testing.T) {
	for _, c := range [][6]string{
		{"get", "https://127.0.0.1:18443/402", "exact", "eip155:84532", "0xf54127927F219FB78C8D1A1fF3D7dc6D7f70C98E", "10000"},
		{"POST", "http://s.example/x?a=1&b=\x00", "upto", "base", "0xABCDEFabcdef0123456789012345678901234567", "1000000000000000000"},
		{"Put", "", "exact", "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp", "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin", "0"},
	} {
		got, err := ticketKey(c[0], c[1], c[2], c[3], c[4], c[5])
		if err != nil {
			t.Fatal(err)
		}
		n, _ := x402.CAIP2(c[3])
		a, _ := x402.ParseAtomic(c[5])
		sum := sha256.Sum256([]byte(strings.Join([]string{strings.ToUpper(c[0]), c[1], c[2], n,
			x402.CanonicalAddress(c[4]), fmt.Sprint(a)}, "\x00")))
		if want := "tk1:" + hex.EncodeToString(sum[:]); got != want {
			t.Errorf("ticketKey(%q) = %s, want %s", c, got, want)
		}
	}
}
