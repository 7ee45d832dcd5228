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
		// A URL longer than the key's stack buffer, a lower-case and a mixed-case EVM payee, not an address.
		{"GET", "https://s.example/" + strings.Repeat("a/", 400), "exact", "eip155:8453", "0xf54127927f219fb78c8d1a1ff3d7dc6d7f70c98e", "1"},
		{"delete", "https://s.example/x", "exact", "eip155:8453", "0XF54127927F219FB78C8D1A1FF3D7DC6D7F70C98E", "1"},
		{"GET", "https://s.example/x", "exact", "eip155:8453", "NotAnAddressÄ", "1"},
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

// TestNewIDShape: a hold or ticket id is its prefix, "_" and store.NewID's 32 hex digits, unique.
func TestNewIDShape(t *testing.T) {
	a, b := newID("tkt"), newID("tkt")
	if len(a) != len("tkt_")+32 || !strings.HasPrefix(a, "tkt_") || a == b {
		t.Fatalf("newID: %q, %q", a, b)
	}
	if _, err := hex.DecodeString(a[len("tkt_"):]); err != nil {
		t.Fatalf("newID %q: %v", a, err)
	}
}
