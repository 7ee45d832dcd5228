package evmaddr

import (
	"strings"
	"testing"
)

const addr = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"

func TestIsAndIsWire(t *testing.T) {
	for _, c := range []struct {
		s          string
		is, isWire bool
	}{
		{addr, true, true},
		{"0X833589FCD6EDB6E08F4C7C32D4F71B54BDA02913", true, false}, // another spelling of the account; not x402's form
		{"0x833589fcd6edb6e08f4c7c32d4f71b54bda0291", false, false}, // 39 digits
		{"0x833589fcd6edb6e08f4c7c32d4f71b54bda029133", false, false},
		{"0x833589fcd6edb6e08f4c7c32d4f71b54bda0291g", false, false},
		{"833589fcd6edb6e08f4c7c32d4f71b54bda0291300", false, false}, // no 0x
		{"1x833589fcd6edb6e08f4c7c32d4f71b54bda02913", false, false},
		{"", false, false},
		{"0x８33589fcd6edb6e08f4c7c32d4f71b54bda029", false, false}, // a fullwidth digit is not hex
	} {
		if Is(c.s) != c.is || IsWire(c.s) != c.isWire {
			t.Errorf("%q: Is %v IsWire %v, want %v %v", c.s, Is(c.s), IsWire(c.s), c.is, c.isWire)
		}
	}
}

func TestCanonicalAndSame(t *testing.T) {
	upper := "0X833589FCD6EDB6E08F4C7C32D4F71B54BDA02913"
	if got := Canonical(upper); got != "0x833589fcd6edb6e08f4c7c32d4f71b54bda02913" {
		t.Fatalf("Canonical(%q) = %q", upper, got)
	}
	if Canonical("So11111111111111111111111111111111111111112") != "So11111111111111111111111111111111111111112" {
		t.Fatal("a base58 address was changed")
	}
	if !Same(addr, upper) {
		t.Fatal("two spellings of one EVM account are not the same payee")
	}
	if Same("So11111111111111111111111111111111111111112", "so11111111111111111111111111111111111111112") {
		t.Fatal("base58 compared case-insensitively")
	}
}

// EqualLower is the comparison with strings.ToLower's form, for addresses in every letter case and for
// ASCII strings near them.
func TestEqualLower(t *testing.T) {
	addrs := []string{"0xf54127927F219FB78C8D1A1fF3D7dc6D7f70C98E", "0XF54127927F219FB78C8D1A1FF3D7DC6D7F70C98E",
		"0xf54127927f219fb78c8d1a1ff3d7dc6d7f70c98e", "0xf54127927f219fb78c8d1a1ff3d7dc6d7f70c98", "", "0x", "abc", "ABC", "a[b`c@{"}
	for _, s := range addrs {
		for _, canon := range addrs {
			for _, c := range []string{canon, strings.ToLower(canon), strings.ToUpper(canon)} {
				if got, want := EqualLower(c, s), c == strings.ToLower(s); got != want {
					t.Fatalf("EqualLower(%q, %q) = %v, want %v", c, s, got, want)
				}
			}
		}
		if Is(s) && !EqualLower(Canonical(s), s) {
			t.Fatalf("EqualLower(Canonical(%q)) is false", s)
		}
	}
}

// CanonicalKey is Canonical for every address Is accepts, whatever its case.
func TestCanonicalKeyIsCanonical(t *testing.T) {
	for _, s := range []string{addr, strings.ToUpper(addr), "0X" + addr[2:], strings.ToLower(addr)} {
		if key := CanonicalKey(s); string(key[:]) != Canonical(s) {
			t.Errorf("CanonicalKey(%q) = %q, Canonical %q", s, key[:], Canonical(s))
		}
	}
}
